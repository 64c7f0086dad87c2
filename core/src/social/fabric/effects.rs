//! Applying what happens to the people it happens to: regard changed (and recorded as a story
//! event), needs moved by role, and mood remembered. Which interaction or sighting causes them
//! is for [`super::witness`] and the sibling `resolve` module.

use super::needs::{ROLES, role_delta, shift};
use super::record::StepAt;
use super::state::SocialFabric;
use crate::decision::agent::Agent;
use crate::life::simulator::SimulatedAgent;
use crate::social::chronicle::StoryEventKind;
use crate::social::interaction::{FacetDeltas, NeedDeltas};
use crate::social::relationships::Facet;

impl SocialFabric {
    pub(in crate::social) fn change_regard(
        &mut self,
        from: &str,
        to: &str,
        deltas: &FacetDeltas,
        cause: &str,
        at: &mut StepAt<'_>,
    ) {
        for (facet, delta) in deltas.changes() {
            let applied = self
                .relationships
                .adjust(from, to, facet, delta, at.now_hours);
            self.record_change(from, to, facet, applied, cause, at);
        }
    }

    pub(in crate::social) fn record_change(
        &self,
        from: &str,
        to: &str,
        facet: Facet,
        applied: f64,
        cause: &str,
        at: &mut StepAt<'_>,
    ) {
        if applied == 0.0 {
            return;
        }
        at.push_event(StoryEventKind::RelationshipChanged {
            from: from.to_owned(),
            to: to.to_owned(),
            facet,
            delta: applied,
            value: self.relationships.value(from, to, facet),
            cause: cause.to_owned(),
        });
    }

    pub(in crate::social) fn apply_needs(&self, agent: &mut Agent, deltas: &NeedDeltas) {
        for role in ROLES {
            let delta = role_delta(deltas, role);
            if delta != 0.0 {
                shift(agent, self.need(role), delta);
            }
        }
    }

    pub(in crate::social) fn remember_mood(
        simulated: &mut SimulatedAgent,
        mood_delta: f64,
        now_hours: f64,
    ) {
        if mood_delta == 0.0 {
            return;
        }
        if let Some((config, wellbeing)) = simulated
            .layers
            .get_mut()
            .and_then(|layers| layers.wellbeing.as_deref_mut())
        {
            config.remember(wellbeing, mood_delta, now_hours);
        }
    }
}
