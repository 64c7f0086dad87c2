"""The quest grammar: how a story signal of each supported type becomes a quest offer.

A template names who gives the quest (an NPC of the signal, never the one its context names as
the wrongdoer), what it is about (the target: the wrongdoer, the rival, the blocked goal, the
scarce need…), a few title patterns to pick from, and a base reward in gold. `draft` fills one
in with the board's random generator, so the same signal and generator state give the same
quest. Signal types without a template are not turned into quests.
"""
from dataclasses import dataclass

# The context keys geppetto uses for the one a signal is against (docs/contract.md,
# `quest_outcome`): such an NPC is a target, never a giver.
WRONGDOER_KEYS = ("subject", "traitor", "against")


@dataclass(frozen=True)
class Template:
    titles: tuple          # format strings over {giver}, {target}, {place}
    target_key: str | None  # context key naming the target; None: another NPC of the signal
    reward: int            # base reward in gold, scaled by the signal's importance


TEMPLATES = {
    "threat_detected": Template(
        ("Keep {target} away from the {place} for {giver}",
         "{giver} fears {target}: stand watch at the {place}",
         "Find out what {target} wants at the {place}"), "subject", 30),
    "rivalry_escalation": Template(
        ("Settle the quarrel between {giver} and {target}",
         "Carry {giver}'s peace offering to {target} at the {place}",
         "Stop {giver} and {target} coming to blows at the {place}"), None, 20),
    "goal_blocked": Template(
        ("Help {giver}: {target}",
         "{giver} is stuck at the {place} and needs a hand to {target}"), "goal", 15),
    "resource_scarcity": Template(
        ("Bring {target} to {giver} at the {place}",
         "{giver} is short of {target}: find some near the {place}"), "need", 15),
    "trade_opportunity": Template(
        ("Carry goods to the {target} for {giver}",
         "{giver} wants a runner to take wares to the {target}"), "market", 10),
    "betrayal": Template(
        ("Confront {target}, who betrayed {giver}",
         "Gather proof against {target} for {giver} at the {place}"), "traitor", 35),
    "crisis": Template(
        ("Help {giver} through the trouble at the {place}",
         "Calm the {place} before it boils over, for {giver}"), None, 40),
    "faction_tension": Template(
        ("Keep the peace at the {place} for {giver}",), None, 25),
    "secret_revealed": Template(
        ("Learn what {giver} knows about {target}",), "subject", 20),
}


def draft(signal, rng, names=None):
    """(title, giver, target, reward) for a story signal's state, or None when its type has
    no template or it names no NPC to give the quest. `names` (an NPC or room id -> the name
    the title shows) changes the title's words only, never a choice."""
    template = TEMPLATES.get(signal["signal_type"])
    npcs = list(signal.get("npcs") or [])
    if template is None or not npcs:
        return None
    context = signal.get("context") or {}
    wrongdoers = {context.get(key) for key in WRONGDOER_KEYS}
    givers = [npc for npc in npcs if npc not in wrongdoers] or npcs
    giver = rng.choice(givers)
    target = context.get(template.target_key) if template.target_key else None
    if target is None:
        others = [npc for npc in npcs if npc != giver]
        target = rng.choice(others) if others else signal.get("location") or "trouble"
    name = names or (lambda word: word)
    title = rng.choice(template.titles).format(giver=name(giver), target=name(target),
                                               place=name(signal.get("location") or "village"))
    reward = template.reward + round(template.reward * signal.get("importance", 0)) + rng.randint(0, 9)
    return title, giver, target, reward
