-- A durable essay workflow written as plain functions (the functional API,
-- docs/functional.md), with no LLM:
--   outline   a task: three section titles for the topic
--   section   a task per title; the three are started before any is waited
--             for, so they run in parallel on the workers, then joined
--   review    the entrypoint shows the draft to a human with interrupt():
--             "approve" publishes it, any other answer is feedback that the
--             revise task works in
--
--   superstep run examples/lua/essay.lua --db /tmp/essay.db --thread e1 --input '{"topic":"durable workflows"}'
--   superstep run examples/lua/essay.lua --db /tmp/essay.db --thread e1 --resume '"approve"'
-- Each task says on stderr when it runs. On resume the entrypoint runs again
-- from its start, but the outline and the sections are not written again:
-- their results come back from the checkpoint. ESSAY_SLOW=SECONDS makes the
-- last section that slow (tests/cli/test_essay.sh kills the run there).
local sst = superstep or require("superstep")

local function say(fmt, ...) io.stderr:write(string.format(fmt, ...), "\n") end

-- Tasks are defined at the top level, so every worker's Lua state has them
-- and they can run in parallel.
local outline = sst.task("outline", function(topic)
  say("outline: %s", topic)
  return { "What " .. topic .. " are", "Why " .. topic .. " matter",
           "How to start with " .. topic }
end)

-- A task with options: retried like a flaky model call would be.
local section = sst.task{ name = "section", retry = { max_attempts = 3, initial_interval = 0 } }(
  function(part)
    say("section %d: %s", part.n, part.title)
    local slow = tonumber(os.getenv("ESSAY_SLOW") or "")
    if slow and part.n == part.of then
      sst.sleep(slow)
    end
    return string.format("## %s\n\nA paragraph on %s.", part.title, part.title:lower())
  end)

local revise = sst.task("revise", function(req)
  say("revise: %s", req.feedback)
  return req.draft .. "\n\n(revised: " .. req.feedback .. ")"
end)

-- The workflow. Its result is the thread's state: the CLI prints it.
return sst.entrypoint{ name = "essay", workers = 4 }(function(input, ctx)
  local topic = input and input.topic or "durable workflows"
  local titles = outline(topic):result()

  local futures = {}                          -- start all three ...
  for n, title in ipairs(titles) do
    futures[n] = section({ n = n, of = #titles, title = title })
  end
  local parts = {}                            -- ... then wait for each
  for n, f in ipairs(futures) do parts[n] = f:result() end
  local draft = table.concat(parts, "\n\n")
  ctx.emit({ sections = #parts })             -- the custom stream

  -- The run stops here the first time; on resume interrupt() returns the answer.
  local answer = sst.interrupt({ draft = draft, question = "approve?" })
  if answer == "approve" then
    return { topic = topic, status = "published", essay = draft }
  end
  local revised = revise({ draft = draft, feedback = tostring(answer) }):result()
  return { topic = topic, status = "revised", essay = revised }
end)
