// The example auth of examples/auth (docs/auth.md) for LangGraph.js's own server, written with
// its Auth class (@langchain/langgraph-sdk/auth): the same users, tokens and rules, so that
// compare.mjs can run one SDK script against both servers.
//
// - authenticate: `Authorization: Bearer <JWT>`, HS256 with the secret in $AUTH_JWT_SECRET,
//   iss "https://auth.example.com", aud "superstep", exp/nbf checked; the user is the `sub`
//   claim, their permissions the `permissions` claim (examples/auth/langgraph.json). The
//   refusals are 401 with superstep's messages.
// - a user whose permissions hold "admin" sees and changes everything (no filter);
// - anyone else: what they create is theirs (metadata.owner = identity, whatever the body
//   said; an update cannot give it away) and they see their own ({owner: identity});
// - assistants: everyone reads and searches every assistant (LangGraph's filters cannot say
//   "mine or the graph's own", which superstep's built-in rule is), changes only their own;
// - the store: a namespace's first label must be the user's identity (else 403).
import crypto from "node:crypto";
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";

const ISSUER = "https://auth.example.com";
const AUDIENCE = "superstep";
const ADMIN = "admin";

const refuse = (message: string): never => {
  throw new HTTPException(401, { message });
};

function decode(part: string, what: string): any {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) refuse(`invalid token: its ${what} is not base64url JSON`);
  try {
    const v = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    if (v === null || typeof v !== "object" || Array.isArray(v)) throw new Error("not an object");
    return v;
  } catch {
    return refuse(`invalid token: its ${what} is not base64url JSON`);
  }
}

function verify(token: string) {
  if (token.length > 8192) refuse("invalid token: longer than 8192 bytes");
  const parts = token.split(".");
  if (parts.length !== 3) refuse("invalid token: not a JWT (header.payload.signature)");
  const [h, p, s] = parts;
  const header = decode(h, "header");
  if (header.alg !== "HS256") refuse(`invalid token: algorithm '${header.alg}' is not accepted (want HS256)`);
  const secret = process.env.AUTH_JWT_SECRET ?? "";
  const want = crypto.createHmac("sha256", secret).update(`${h}.${p}`).digest();
  const got = Buffer.from(s, "base64url");
  if (got.length !== want.length || !crypto.timingSafeEqual(got, want)) refuse("invalid token: bad signature");
  const claims = decode(p, "payload");
  const now = Math.floor(Date.now() / 1000);
  if (typeof claims.exp === "number" && now >= claims.exp) refuse("token expired");
  if (typeof claims.nbf === "number" && now < claims.nbf) refuse("token not valid yet (nbf)");
  if (claims.iss !== ISSUER) refuse("invalid token: wrong issuer (iss)");
  const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!aud.includes(AUDIENCE)) refuse("invalid token: wrong audience (aud)");
  if (typeof claims.sub !== "string" || claims.sub === "") refuse('invalid token: no "sub" claim naming the user');
  const perms = claims.permissions;
  const permissions = Array.isArray(perms) ? perms.filter((x) => typeof x === "string")
    : typeof perms === "string" ? perms.split(" ").filter(Boolean) : [];
  return { ...claims, identity: claims.sub, permissions };
}

const isAdmin = (user: any) => (user?.permissions ?? []).includes(ADMIN);

function own({ user, action, value }: any) {
  if (isAdmin(user)) return undefined; // no filter: everything
  if (action === "create" || action === "create_run") {
    value.metadata ??= {};
    value.metadata.owner = user.identity;
  } else if (action === "update" && value.metadata && typeof value.metadata === "object") {
    value.metadata.owner = user.identity; // nobody gives a resource away
  }
  return { owner: user.identity };
}

function store({ user, action, value }: any) {
  if (isAdmin(user)) return undefined;
  const ns = value.namespace;
  if ((action === "search" || action === "list_namespaces") && (!Array.isArray(ns) || ns.length === 0)) {
    // The namespaces of this user only (the server matches the filter to each one).
    return { namespace: { $contains: user.identity } };
  }
  if (!Array.isArray(ns) || ns[0] !== user.identity) {
    throw new HTTPException(403, { message: "store: a namespace must begin with your identity" });
  }
  return undefined;
}

export const auth = new Auth()
  .authenticate(async (request: Request) => {
    const header = request.headers.get("authorization");
    if (!header) refuse("Missing authentication: send 'Authorization: Bearer <token>'");
    const m = /^Bearer\s+(.+)$/i.exec(header ?? "");
    if (!m) refuse("Missing authentication: send 'Authorization: Bearer <token>'");
    return verify(m![1].trim()) as any;
  })
  .on("*", own)
  .on("assistants:read", () => undefined)
  .on("assistants:search", () => undefined)
  .on("store", store);
