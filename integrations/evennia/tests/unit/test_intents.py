"""geppetto's messages in as what Evennia objects do: walks exit by exit, actions that end
when their ticks are up, barks, narrated scenes, cancels, relocations, the answers to orders
and story signals — each message once, every entry acknowledged."""
from unittest.mock import patch

from evennia import create_channel, create_object

from geppetto_evennia import Bridge

from .support import GeppettoTest, Heard


class WalkTest(GeppettoTest):
    def setUp(self):
        super().setUp()
        self.mira = self.npc("mira", "Mira", self.room1)

    def test_a_walk_goes_one_exit_per_exit_minutes_and_reports_each_arrival(self):
        watcher = Heard(self.char2)
        self.intent("navigate", "mira", "walk-1", to_room="bakery", provider="oven")
        self.assertEqual([e.key for e in self.bridge.jobs["mira"].exits], ["market", "bakery"])
        self.bridge.clock(422)
        self.assertEqual(self.mira.location, self.room1)
        self.bus.take()
        self.bridge.clock(423)
        self.assertEqual(self.mira.location, self.room2)
        self.assertEqual([(m["type"], m.get("npc"), m.get("room")) for m in self.bus.take()],
                         [("npc_moved", "mira", "market"), ("time_advanced", None, None)])
        self.assertIn("Mira is leaving Room", watcher)
        self.bridge.clock(426)
        self.assertEqual(self.mira.location, self.room3)
        self.assertEqual(self.bus.take("npc_moved")[0]["room"], "bakery")
        self.assertNotIn("mira", self.bridge.jobs)
        self.assertEqual(self.bridge.figures["walks arrived"], 1)
        self.assertEqual(self.bridge.figures["npc moves"], 2)

    def test_the_exit_minutes_are_the_bridges(self):
        self.bridge.exit_minutes = 1
        self.intent("navigate", "mira", "walk-1", to_room="market")
        self.bridge.clock(421)
        self.assertEqual(self.mira.location, self.room2)

    def test_a_walk_to_where_the_npc_stands_is_no_job(self):
        self.intent("navigate", "mira", "walk-1", to_room="square")
        self.assertNotIn("mira", self.bridge.jobs)
        self.assertEqual(self.bus.take(), [])

    def test_a_walk_to_an_unreachable_room_fails_at_once(self):
        self.room3.tags.add("island", category="geppetto_room")
        for exit_obj in self.room3.contents:
            exit_obj.delete()
        self.intent("navigate", "mira", "walk-1", to_room="nowhere")
        sent = self.assertSent("action_failed", npc="mira", intent="walk-1")
        self.assertEqual(sent["reason"], "no way from Room to nowhere")
        self.assertNotIn("mira", self.bridge.jobs)

    def test_a_barred_exit_fails_the_walk_where_the_npc_stands(self):
        watcher = Heard(self.char1)
        self.exit.locks.add("traverse:false()")
        self.intent("navigate", "mira", "walk-1", to_room="bakery")
        self.bridge.clock(423)
        self.assertEqual(self.mira.location, self.room1)
        sent = self.bus.take("action_failed")
        self.assertEqual([(m["intent"], m["reason"]) for m in sent],
                         [("walk-1", "the way to market is barred")])
        self.assertIn("Mira finds the way to market barred.", watcher)
        self.assertEqual(self.bridge.figures["navigates failed"], 1)

    def test_an_npc_gone_from_the_world_fails_its_walk(self):
        self.intent("navigate", "mira", "walk-1", to_room="market")
        self.mira.location = None
        self.bridge.clock(423)
        sent = self.bus.take("action_failed")
        self.assertEqual([m["reason"] for m in sent], ["the NPC is no longer in the world"])

    def test_an_intent_for_an_npc_not_in_the_game_does_nothing(self):
        with self.assertLogs("geppetto_evennia", "WARNING") as logged:
            self.intent("navigate", "ghost", "walk-1", to_room="market")
        self.assertIn("navigate walk-1 for ghost, who is not in the game", logged.output[0])
        self.assertEqual(self.bridge.jobs, {})
        self.assertEqual(self.bus.take(), [])
        self.assertEqual(self.bridge.figures["intent navigate"], 1)


class ActionTest(GeppettoTest):
    def setUp(self):
        super().setUp()
        self.nell = self.npc("nell", "Nell", self.room1)
        self.provider("well", "the well", self.room1, ["draw_water"])
        self.watcher = Heard(self.char1)

    def test_an_action_shows_in_the_room_and_completes_after_its_ticks(self):
        self.intent("use", "nell", "use-1", provider="well", action="draw_water", duration_ticks=3)
        self.assertIn("Nell sets about: draw water (the well).", self.watcher)
        self.bridge.clock(422)
        self.assertEqual(self.bus.take("action_completed"), [])
        self.bridge.now = 423         # what clock(423) does before it sends time_advanced
        self.bridge.step()
        self.assertSent("action_completed", npc="nell", intent="use-1", outcome="done")
        self.assertNotIn("nell", self.bridge.jobs)

    def test_an_action_lasts_at_least_a_minute(self):
        self.intent("use", "nell", "use-1", provider="well", action="draw_water", duration_ticks=0)
        self.assertEqual(self.bridge.jobs["nell"].due, 421)

    def test_an_unknown_provider_is_shown_by_its_id(self):
        self.intent("use", "nell", "use-1", provider="river", action="fish", duration_ticks=1)
        self.assertIn("Nell sets about: fish (river).", self.watcher)

    def test_a_cancel_stops_the_action_it_names_and_no_other(self):
        self.intent("use", "nell", "use-1", provider="well", action="draw_water", duration_ticks=5)
        self.intent("cancel", "nell", "c-1", cancelled="use-0", reason="superseded")
        self.assertIn("nell", self.bridge.jobs)
        self.intent("cancel", "nell", "c-2", cancelled="use-1", reason="superseded")
        self.assertNotIn("nell", self.bridge.jobs)
        self.assertIn("Nell stops what they were doing.", self.watcher)
        self.assertEqual(self.bridge.figures["cancelled superseded"], 1)
        self.bridge.clock(430)
        self.assertEqual(self.bus.take("action_completed"), [])

    def test_a_reaction_takes_over_from_the_action(self):
        self.intent("use", "nell", "use-1", provider="well", action="draw_water", duration_ticks=5)
        self.intent("reactive", "nell", "r-1", action="flee_in_panic")
        self.assertIn("Nell suddenly: flee in panic!", self.watcher)
        self.assertNotIn("nell", self.bridge.jobs)

    def test_lines_are_shown_as_given_braces_and_dollars_included(self):
        self.intent("bark", "nell", "b-1", text="Mind the {gap} and $You() too!")
        self.intent("social", "nell", "s-1", narration="Nell draws {water}.")
        self.assertIn('Nell says, "Mind the {gap} and $You() too!"', self.watcher)
        self.assertIn("Nell draws {water}.", self.watcher)
        self.assertEqual(self.bridge.figures["messages that failed"], 0)

    def test_a_bark_is_a_line_of_speech_in_the_room(self):
        elsewhere = Heard(self.char2)
        self.char2.move_to(self.room2, quiet=True)
        self.intent("bark", "nell", "b-1", text="Water's cold today!")
        self.assertIn('Nell says, "Water\'s cold today!"', self.watcher)
        self.assertNotIn("Water's cold", elsewhere)
        self.assertEqual(self.bridge.figures["barks shown"], 1)


class SceneTest(GeppettoTest):
    def setUp(self):
        super().setUp()
        self.pip = self.npc("pip", "Pip", self.room1)
        self.ann, self.bob = Heard(self.char1), Heard(self.char2)

    def test_a_scene_is_told_to_the_players_who_saw_it_and_its_narration_follows_them(self):
        self.intent("social", "pip", "s-1", narration="Pip and Nell chatter at the well.")
        self.assertIn("Pip and Nell chatter at the well.", self.ann)
        self.assertIn("Pip and Nell chatter at the well.", self.bob)
        self.char2.move_to(self.room2, quiet=True)
        latecomer = Heard(create_object("evennia.objects.objects.DefaultCharacter", key="Cay",
                                        location=self.room1))
        self.handle("narrative", {"type": "narrative_ready", "id": "n-1", "interaction_id": "s-1",
                                  "text": "The children giggle over a secret."})
        self.assertIn("The children giggle over a secret.", self.ann)
        self.assertIn("The children giggle over a secret.", self.bob)
        self.assertEqual(latecomer.texts, [])
        self.assertNotIn("s-1", self.bridge.witnesses)
        self.assertEqual(self.bridge.figures["narrations shown"], 2)

    def test_a_scene_without_narration_is_not_remembered(self):
        self.intent("social", "pip", "s-1")
        self.assertEqual(self.bridge.witnesses, {})
        self.assertEqual(self.ann.texts, [])

    def test_a_narration_of_a_scene_nobody_saw_is_dropped(self):
        self.handle("narrative", {"type": "narrative_ready", "id": "n-1", "interaction_id": "s-9",
                                  "text": "Nobody hears this."})
        self.assertNotIn("Nobody hears this.", self.ann)

    def test_only_the_newest_scenes_are_remembered(self):
        with patch("geppetto_evennia.bridge.WITNESSED_SCENES_KEPT", 2):
            for n in range(3):
                self.intent("social", "pip", f"s-{n}", narration=f"scene {n}")
        self.assertEqual(list(self.bridge.witnesses), ["s-1", "s-2"])


class ReplyTest(GeppettoTest):
    def setUp(self):
        super().setUp()
        self.npc("pip", "Pip", self.room1)
        self.ann, self.other = Heard(self.char1), Heard(self.char2)

    def test_a_reply_is_a_line_in_the_room_and_its_narration_follows_to_who_heard_it(self):
        self.intent("reply", "pip", "r-1", to="Char", text="Morning! Fine day for it.",
                    in_reply_to="evennia-x-1")
        line = 'Pip says to Char, "Morning! Fine day for it."'
        self.assertEqual((self.ann.texts, self.other.texts), ([line], [line]))
        self.assertEqual(self.bridge.figures["replies shown"], 1)
        self.char2.move_to(self.room2, quiet=True)
        self.other.texts.clear()
        self.bus.take()
        self.handle("narrative", {"type": "narrative_ready", "id": "n-1", "interaction_id": "r-1",
                                  "text": "Pip grins up at you."})
        self.assertEqual(self.ann.texts[-1], "Pip grins up at you.")
        self.assertIn("Pip grins up at you.", self.other)    # it heard the reply, then left
        self.assertEqual(self.bus.take(), [])


class NpcEventTest(GeppettoTest):
    def setUp(self):
        super().setUp()
        self.piet = self.npc("piet", "Piet the trader", self.room1)
        self.ann = Heard(self.char1)

    def test_a_relocation_places_the_npc_and_is_not_reported_back(self):
        self.intent("navigate", "piet", "walk-1", to_room="bakery")
        self.handle("npc_events", {"type": "npc_relocated", "id": "e-1", "npc": "piet",
                                   "from": "square", "to": "bakery"})
        self.assertEqual(self.piet.location, self.room3)
        self.assertNotIn("piet", self.bridge.jobs)
        self.assertEqual(self.bus.take(), [])

    def test_a_relocation_is_seen_leaving_and_arriving(self):
        self.room3.key = "the bakery"
        baker = Heard(self.char2)
        self.char2.move_to(self.room3, quiet=True)
        self.bus.take()
        baker.texts.clear()                                # what char2 saw of the bakery
        self.handle("npc_events", {"type": "npc_relocated", "id": "e-1", "npc": "piet",
                                   "from": "square", "to": "bakery"})
        self.assertEqual(self.ann.texts, ["Piet the trader heads off to the bakery."])
        self.assertEqual(baker.texts, ["Piet the trader arrives from Room."])
        self.assertEqual(self.bridge.figures["relocations shown"], 1)
        self.handle("npc_events", {"type": "npc_relocated", "id": "e-2", "npc": "piet",
                                   "from": "bakery", "to": "bakery"})
        self.assertEqual(len(baker.texts), 1)              # already there: nothing to see

    def test_a_relocation_shows_geppettos_lines_when_it_gives_them(self):
        baker = Heard(self.char2)
        self.char2.move_to(self.room3, quiet=True)
        baker.texts.clear()
        self.handle("npc_events", {"type": "npc_relocated", "id": "e-1", "npc": "piet",
                                   "from": "square", "to": "bakery", "activity": "work",
                                   "leave": "Piet the trader leaves: time for work.",
                                   "arrive": "Piet the trader arrives: time for {work}."})
        self.assertEqual(self.ann.texts, ["Piet the trader leaves: time for work."])
        self.assertEqual(baker.texts, ["Piet the trader arrives: time for {work}."])   # verbatim

    def test_the_player_hears_an_order_accepted_then_done_and_then_no_more(self):
        order = self.bridge.order(self.char1, "piet", "gatehouse", "report_a_theft")
        for n, (kind, extra) in enumerate([("order_accepted", {}),
                                           ("order_done", {"outcome": "completed"}),
                                           ("order_done", {"outcome": "again"})]):
            self.handle("npc_events", {"type": kind, "id": f"e-{n}", "npc": "piet", "order": order, **extra})
        self.assertEqual(self.ann.texts, ["Piet the trader will do as you asked.",
                                          "Piet the trader is done with your order (completed)."])
        self.assertNotIn(order, self.bridge.orders)

    def test_a_refused_order_gives_the_reason(self):
        order = self.bridge.order(self.char1, "piet", "gatehouse", "report_a_theft")
        self.handle("npc_events", {"type": "order_refused", "id": "e-1", "npc": "piet", "order": order,
                                   "reason": "engaged"})
        self.assertEqual(self.ann.texts, ["Piet the trader refuses your order (engaged)."])

    def test_answers_to_orders_this_game_did_not_give_are_ignored(self):
        self.handle("npc_events", {"type": "order_done", "id": "e-1", "npc": "piet", "order": "x",
                                   "outcome": "completed"})
        self.assertEqual(self.ann.texts, [])


class StoryTest(GeppettoTest):
    signal = {"type": "story_signal", "id": "st-1", "signal": "theft_witnessed:4",
              "signal_type": "theft_witnessed", "location": "market", "npcs": ["piet", "vex"],
              "importance": 0.8, "context": {"item": "purse", "by": "vex"}, "merged": 0}

    def test_a_story_signal_goes_to_the_staff_channel_by_default(self):
        channel = create_channel("MudInfo")
        with patch.object(type(channel), "msg") as posted:
            self.handle("story", self.signal)
        posted.assert_called_once_with("[geppetto] theft witnessed at market, piet, vex "
                                       "(importance 0.80): by: vex; item: purse [theft_witnessed:4]")

    def test_a_signals_later_life_goes_to_the_staff_channel_too(self):
        channel = create_channel("MudInfo")
        with patch.object(type(channel), "msg") as posted:
            self.handle("story", {**self.signal, "id": "st-2", "type": "story_signal_updated",
                                  "importance": 0.9, "merged": 2, "taken_by": "quest-board"})
            self.handle("story", {**self.signal, "id": "st-3", "type": "story_signal_expired",
                                  "reason": "lapsed"})
            self.handle("story", {**self.signal, "id": "st-4", "type": "story_signal_resolved",
                                  "by": "quest-board", "outcome": "completed"})
        self.assertEqual([c.args[0] for c in posted.call_args_list], [
            "[geppetto] theft_witnessed:4 updated: piet, vex (importance 0.90, merged 2), taken by quest-board",
            "[geppetto] theft_witnessed:4 expired (lapsed)",
            "[geppetto] theft_witnessed:4 resolved by quest-board: completed"])

    def test_a_quest_system_overrides_the_hook(self):
        taken = []

        class Quests(Bridge):
            def on_story_signal(self, m):
                taken.append(m["type"])

            on_story_signal_updated = on_story_signal_expired = on_story_signal_resolved = on_story_signal

        self.bridge = self.game_script.own(Quests(self.bus))
        for n, kind in enumerate(("story_signal", "story_signal_updated", "story_signal_expired",
                                  "story_signal_resolved")):
            self.handle("story", {**self.signal, "id": f"st-{n}", "type": kind})
        with self.assertLogs("geppetto_evennia", "WARNING") as logged:
            self.handle("story", {**self.signal, "id": "st-9", "type": "story_other"})
        self.assertIn("story message st-9 of unknown type story_other", logged.output[0])
        self.assertEqual(taken, ["story_signal", "story_signal_updated", "story_signal_expired",
                                 "story_signal_resolved"])
        self.assertEqual(self.bridge.figures["story messages unknown"], 1)
        self.assertEqual(self.bridge.figures["messages that failed"], 0)


class DeliveryTest(GeppettoTest):
    def setUp(self):
        super().setUp()
        self.npc("nell", "Nell", self.room1)
        self.ann = Heard(self.char1)

    def test_a_message_delivered_twice_is_carried_out_once_and_acknowledged_twice(self):
        first = self.intent("bark", "nell", "b-1", text="Hello!")
        again = self.intent("bark", "nell", "b-1", text="Hello!")
        self.assertEqual(self.ann.texts, ['Nell says, "Hello!"'])
        self.assertEqual(self.bridge.figures["duplicates dropped"], 1)
        self.bus.flush()
        self.assertEqual(self.bus.acked, [("intents", first), ("intents", again)])

    def test_a_bad_message_is_counted_acknowledged_and_does_not_stop_the_rest(self):
        self.bus.deliver("intents", {"type": "bark", "id": "bad-1", "npc": "nell"})
        self.bus.deliver("intents", {"type": "bark", "id": "b-2", "npc": "nell", "text": "Still here."})
        with self.assertLogs("geppetto_evennia", "ERROR"):
            self.bridge.handle(self.bus.read())
        self.assertEqual(self.ann.texts, ['Nell says, "Still here."'])
        self.assertEqual(self.bridge.figures["messages that failed"], 1)
        self.bus.flush()
        self.assertEqual(len(self.bus.acked), 2)

    def test_handled_ids_are_bounded_and_the_newest_kept(self):
        self.bridge.seen_limit = 3
        for n in range(5):
            self.bridge.remember(f"m-{n}")
        self.assertEqual(self.bridge.seen, {"m-2", "m-3", "m-4"})
        self.assertEqual(self.bridge.handled_ids(2), ["m-3", "m-4"])
        self.assertEqual(self.bridge.handled_ids(0), [])
        later = Bridge(self.bus)
        later.restore_handled(["m-3", "m-4", "m-4"])
        self.assertEqual(list(later.seen_order), ["m-3", "m-4"])
