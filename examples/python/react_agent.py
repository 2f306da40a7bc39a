"""A support agent built with create_react_agent (LangGraph's prebuilt ReAct agent) on
superstep's agent layer, offline: the scripted model (examples/python/react_replies.jsonl)
stands in for an LLM, so the run is the same every time.

  lookup_order, refund_policy   Python functions as tools (@tool: schema from the
                                signature and docstring), called in parallel
  issue_refund                  gated by the human-in-the-loop middleware: the run
                                pauses for a decision, durably (a SQLite checkpoint)

  python3 examples/python/react_agent.py --db agent.db [--decision approve|reject]

With a real model, replace the ChatScripted line with e.g.
ChatOpenAI("gpt-4o-mini") or ChatAnthropic("claude-sonnet-4-5") (keys from the
environment), or ChatOpenAI("llama3", base_url="http://localhost:11434/v1").
"""

import argparse
import os

from superstep.chat_models import ChatScripted
from superstep.checkpoint import SqliteSaver
from superstep.prebuilt import HumanInTheLoopMiddleware, create_react_agent
from superstep.tools import tool
from superstep.types import Command

ORDERS = {"A-1042": {"item": "teal kettle", "amount": 59.5, "delivered_days_ago": 9}}


@tool(parse_docstring=True)
def lookup_order(order_id: str) -> dict:
    """Look up an order.

    Args:
        order_id: the order's id, like A-1042
    """
    return ORDERS.get(order_id, {"error": f"no order {order_id}"})


@tool
def refund_policy(days_since_delivery: int) -> str:
    """Whether an order delivered that many days ago can be refunded."""
    return "refundable" if days_since_delivery <= 30 else "past the 30-day window"


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order (needs a human's approval)."""
    return f"refunded {amount:.2f} for {order_id}"


def build(db: str):
    here = os.path.dirname(os.path.abspath(__file__))
    model = ChatScripted(os.path.join(here, "react_replies.jsonl"))
    return create_react_agent(
        model,
        [lookup_order, refund_policy, issue_refund],
        prompt="You are a support agent. Check the order and the policy before refunding.",
        checkpointer=SqliteSaver(db),
        middleware=[HumanInTheLoopMiddleware(interrupt_on={
            "issue_refund": {"allowed_decisions": ["approve", "reject"]}})],
    )


def show(out: dict) -> None:
    for m in out["messages"]:
        calls = getattr(m, "tool_calls", None) or []
        text = m.content + "".join(f" [{c['name']}({c['args']})]" for c in calls)
        print(f"{m.type:>5}: {text}")
    for it in out.get("__interrupt__", []):
        req = it.value["action_requests"][0]
        print(f"interrupted: approve {req['name']}({req['args']})? "
              f"(resume approve | reject)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default="agent.db")
    ap.add_argument("--thread", default="support-1")
    ap.add_argument("--decision", choices=["approve", "reject"], default="approve")
    ap.add_argument("request", nargs="?", default="Refund order A-1042, please.")
    args = ap.parse_args()
    config = {"configurable": {"thread_id": args.thread}}
    agent = build(args.db)
    out = agent.invoke({"messages": [("user", args.request)]}, config)
    show(out)
    # The run waits in the checkpoint; the decision resumes it (from another process too,
    # with a model that is not scripted).
    decision = {"type": args.decision}
    if args.decision == "reject":
        decision["message"] = "A human declined the refund."
    print(f"--- resumed with {args.decision}")
    out = agent.invoke(Command(resume={"decisions": [decision]}), config)
    show({"messages": out["messages"][-2:]})


if __name__ == "__main__":
    main()
