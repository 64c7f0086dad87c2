//! Time: a `time_advanced` runs the zone's ticks up to the envelope's game time, catching the
//! NPCs up in one analytic step first when the jump is long (`tick`). Time that goes backwards
//! or jumps beyond `tick.max_time_jump_ticks` is refused and the clock stays.

use crate::bus::envelope::WorldMessage;
use crate::zone::{TickInputs, Zone, ZoneOutput};

impl Zone {
    /// Applies a `time_advanced` (`message`).
    pub(super) fn advance_time(
        &mut self,
        message: &WorldMessage,
        inputs: &TickInputs<'_>,
        out: &mut ZoneOutput,
    ) {
        let target = message.header.game_time;
        let now = self.game_time;
        if target < now {
            let reason = format!("game time went backwards: the zone is at {now}, not {target}");
            out.refuse(message, "game_time", reason);
            return;
        }
        let bound = self.config.tick.max_time_jump_ticks;
        if target - now > bound {
            let reason = format!(
                "a jump of {} ticks from {now} is beyond tick.max_time_jump_ticks ({bound})",
                target - now
            );
            out.refuse(message, "game_time", reason);
            return;
        }
        let max = self.config.tick.max_catch_up_ticks_per_event.max(1);
        if target - now > max {
            self.catch_up_all(target - max, out);
        }
        while self.game_time < target {
            self.game_time += 1;
            self.run_tick(inputs, out);
        }
    }
}
