"""The integration a MUD author copies: publish world events to geppetto, carry out intents
and report back (docs/integration.md), consume intents and story signals with a consumer group
(redis-py). Run `geppetto serve` with `[bus] kind = "redis"` and `[clock] kind = "external"`,
then: python examples/mud_client.py [redis-url] [ticks]. Its NPCs walk at once and act for the
ticks an intent says; examples/mud_world.py is a whole small world."""
import json, sys, uuid, redis

url = sys.argv[1] if len(sys.argv) > 1 else "redis://127.0.0.1:6379/0"
ticks = int(sys.argv[2]) if len(sys.argv) > 2 else 30
r, zone, seq = redis.Redis.from_url(url, decode_responses=True), "village", 0
run = uuid.uuid4().hex[:8]    # ids unique across runs: geppetto applies an event id once
key = lambda stream: f"geppetto:{{{zone}}}:{stream}"

def send(kind, game_time, **payload):           # a world event, in the versioned envelope
    global seq; seq += 1
    r.xadd(key("world"), {"m": json.dumps({"v": 1, "type": kind, "id": f"mud-{run}-{seq}",
                                           "zone": zone, "game_time": game_time, **payload})})

for stream in ("intents", "story"):               # our own consumer group on each output stream
    try: r.xgroup_create(key(stream), "mud", id="0", mkstream=True)
    except redis.ResponseError: pass                 # BUSYGROUP: it already exists

last = r.xrevrange(key("world"), count=1)              # the zone's time: its log's newest event
now = json.loads(last[0][1]["m"])["game_time"] if last else 420   # (a zone drops older clock events)
send("player_entered", now, player="ann", room="square")
state = f"mud:{zone}:busy"                             # our own world state, kept between runs:
busy = {npc: tuple(json.loads(v)) for npc, v in r.hgetall(state).items()}  # npc -> (intent, done at)
handled = 0
for t in range(now + 1, now + 1 + ticks):
    send("time_advanced", t)                           # the game's clock: a tick a minute
    for npc, (intent, done_at) in list(busy.items()):  # actions whose time is up: report them
        if done_at <= t:
            send("action_completed", t, npc=npc, intent=intent); del busy[npc]
    reply = r.xreadgroup("mud", "mud-1", {key("intents"): ">", key("story"): ">"}, count=100, block=500)
    for stream, entries in reply or []:
        for entry_id, fields in entries:
            msg = json.loads(fields["m"])              # carry out the intent, then acknowledge it
            kind, npc = msg["type"], msg.get("npc", "")
            print(msg["game_time"], kind, npc, msg.get("action", msg.get("to_room", "")))
            if kind == "navigate":                     # our NPCs walk at once: say where they are
                send("npc_moved", t, npc=npc, room=msg["to_room"])
            elif kind == "use":
                busy[npc] = (msg["id"], t + msg["duration_ticks"])
            elif kind == "cancel":
                busy.pop(npc, None)
            r.xack(stream, "mud", entry_id); handled += 1
r.delete(state)
if busy: r.hset(state, mapping={npc: json.dumps(job) for npc, job in busy.items()})
print(f"handled {handled} messages")
sys.exit(0 if handled > 0 else 1)
