"""The integration a MUD author copies: publish world events to geppetto, carry out intents
and report back (docs/integration.md), consume intents and story signals with a consumer group
(redis-py). Run `geppetto serve` with `[bus] kind = "redis"` and `[clock] kind = "external"`,
then: python examples/mud_client.py [redis-url] [ticks]. Its NPCs walk at once and act for the
ticks an intent says; examples/mud_world.py is a whole small world.

What it gets right, and a game must too:
- every world event has an id of its own, unique across runs (a run id, then a counter):
  geppetto applies an id once, so a second run that counted from 1 again would be dropped;
- it drops an intent it has handled before, by envelope id: Redis delivers again what was
  not acknowledged, and geppetto re-emits under the same ids after a restart;
- a `cancel` ends only the job of the intent it names (`cancelled`), never the NPC's newer one;
- each game minute, it reports what finished first, then sends that minute's `time_advanced`."""
import json, sys, uuid, redis

url = sys.argv[1] if len(sys.argv) > 1 else "redis://127.0.0.1:6379/0"
ticks = int(sys.argv[2]) if len(sys.argv) > 2 else 30
r, zone, seq = redis.Redis.from_url(url, decode_responses=True), "village", 0
run = uuid.uuid4().hex[:12]    # ids unique across runs: geppetto applies an event id once
key = lambda stream: f"geppetto:{{{zone}}}:{stream}"

def send(kind, game_time, **payload):           # a world event, in the versioned envelope
    global seq; seq += 1
    message_id = f"mud-{run}-{seq}"
    r.xadd(key("world"), {"m": json.dumps({"v": 1, "type": kind, "id": message_id,
                                           "zone": zone, "game_time": game_time, **payload})})
    return message_id

for stream in ("intents", "story"):               # our own consumer group on each output stream
    try: r.xgroup_create(key(stream), "mud", id="0", mkstream=True)   # "0": all the stream holds
    except redis.ResponseError: pass                 # BUSYGROUP: it already exists

last = r.xrevrange(key("world"), count=1)              # the zone's time: its log's newest event
now = json.loads(last[0][1]["m"])["game_time"] if last else 420   # (a zone drops older clock events)
state, seen_key = f"mud:{zone}:busy", f"mud:{zone}:seen"   # our own state, kept between runs:
busy = {npc: tuple(json.loads(v)) for npc, v in r.hgetall(state).items()}  # npc -> (intent, done at)
seen = set(r.lrange(seen_key, 0, -1))                  # intent ids handled lately (newest 10,000)
send("player_entered", now, player="ann", room="square")
send("say", now, speaker="ann", room="square", text="Good morning, Pip!", addressee="pip")
handled = duplicates = 0
cursor = "0"                                           # first what we were given and never acked
for t in range(now + 1, now + 1 + ticks):
    for npc, (intent, done_at) in list(busy.items()):  # this minute's reports come first, then
        if done_at <= t:                               # the minute itself: the zone applies them
            send("action_completed", t, npc=npc, intent=intent); del busy[npc]   # before its tick
    send("time_advanced", t)                           # the game's clock: a tick a minute
    reply = r.xreadgroup("mud", "mud-1", {key("intents"): cursor, key("story"): cursor},
                         count=100, block=None if cursor == "0" else 500)
    cursor = ">"
    for stream, entries in reply or []:
        for entry_id, fields in entries:
            msg = json.loads(fields["m"])              # carry out the intent, then acknowledge it
            if msg["id"] in seen:                      # delivered again: handled already
                duplicates += 1; r.xack(stream, "mud", entry_id); continue
            kind, npc = msg["type"], msg.get("npc", "")
            print(msg["game_time"], kind, npc,
                  msg.get("action", msg.get("to_room", msg.get("text", msg.get("signal_type", "")))))
            if kind == "navigate":                     # our NPCs walk at once: say where they are
                send("npc_moved", t, npc=npc, room=msg["to_room"])
            elif kind == "use":                        # carried out for duration_ticks, then reported
                busy[npc] = (msg["id"], t + msg["duration_ticks"])
            elif kind == "cancel":                     # stop that intent only: a newer one stays
                if busy.get(npc, (None,))[0] == msg["cancelled"]:
                    del busy[npc]
            # bark, reply, social: show the line; reactive: act it out. None needs an answer.
            seen.add(msg["id"]); r.lpush(seen_key, msg["id"]); r.ltrim(seen_key, 0, 9999)
            r.xack(stream, "mud", entry_id); handled += 1
r.delete(state)
if busy: r.hset(state, mapping={npc: json.dumps(job) for npc, job in busy.items()})
print(f"handled {handled} messages ({duplicates} duplicates dropped)")
sys.exit(0 if handled > 0 else 1)
