//! Hostile acts seen: every NPC in the actor's place may witness one (a first-hand threat
//! rumour, less trust and respect), and a credible threat is felt (survival pressure, the
//! archetype's `threat` goal reactions). Regard and needs move through [`super::effects`].

use super::needs::{Role, shift};
use super::place::Whereabouts;
use super::record::{SocialStep, StepAt};
use super::state::SocialFabric;
use crate::life::simulator::SimulatedAgent;
use crate::rng::{DetRng, derive_seed, stable_hash};
use crate::social::chronicle::StoryEventKind;
use crate::social::gossip::{Gossip, GossipIntent, RumourTopic};
use crate::social::interaction::FacetDeltas;

impl SocialFabric {
    pub(super) fn witness_hostile_acts(
        &mut self,
        agents: &mut [SimulatedAgent],
        whereabouts: Whereabouts<'_>,
        count: usize,
        now_hours: f64,
        seed: u64,
        out: &mut SocialStep,
    ) {
        let last = self.last_step_hours;
        // The NPCs that may have started an act: those the caller says started something,
        // when it keeps them (present ones only), else everyone present. Both ascending.
        let told = whereabouts.started.is_some();
        let acts: Vec<(usize, String)> = (whereabouts.started.unwrap_or(whereabouts.present))
            .iter()
            .copied()
            .filter(|i| !told || whereabouts.present.binary_search(i).is_ok())
            .take_while(|&i| i < count)
            .filter_map(|i| {
                let running = agents[i].running.as_ref()?;
                // Only acts started since the last call (asked first: it is the common no).
                if last.is_some_and(|last| running.started_at_hours <= last) {
                    return None;
                }
                let tag = running
                    .action
                    .tags
                    .iter()
                    .find(|t| self.hostile_tags.contains(t))?;
                let act = self
                    .config
                    .hostile_act_tags
                    .get(self.hostile_tags.iter().position(|h| h == tag)?)?;
                Some((i, act.clone()))
            })
            .collect();
        for (actor, act) in acts {
            let actor_id = agents[actor].agent.id.clone();
            let here = whereabouts
                .by_place
                .get(whereabouts.index(actor))
                .map_or(&[][..], Vec::as_slice);
            for &witness in here {
                if witness == actor || witness >= count {
                    continue;
                }
                let stream = derive_seed(
                    seed,
                    stable_hash(&format!("{}|{actor_id}", agents[witness].agent.id)),
                );
                if DetRng::new(stream).next_unit() < self.config.witness_chance {
                    let at = &mut StepAt::new(whereabouts.of(witness), now_hours, out);
                    self.witness(agents, witness, &actor_id, &act, at);
                }
            }
        }
    }

    /// `witness` sees `actor` commit `act` (`theft`) at `at`'s place and hour: it holds a
    /// first-hand threat rumour about the actor, trusts and respects it less, feels the threat,
    /// and its archetype may react to it (`on: threat`); the story events go to `at`'s step.
    pub fn witness(
        &mut self,
        agents: &mut [SimulatedAgent],
        witness: usize,
        actor: &str,
        act: &str,
        at: &mut StepAt<'_>,
    ) {
        let Some(witness_id) = agents.get(witness).map(|a| a.agent.id.clone()) else {
            return;
        };
        at.push_event(StoryEventKind::Witnessed {
            witness: witness_id.clone(),
            actor: actor.to_owned(),
            act: act.to_owned(),
        });
        let cause = format!("witnessed:{act}");
        let regard = FacetDeltas {
            trust: -self.config.witness_trust_loss,
            respect: -self.config.witness_respect_loss,
            ..FacetDeltas::default()
        };
        self.change_regard(&witness_id, actor, &regard, &cause, at);
        let confidence = self.config.witness_confidence;
        self.learn(
            &witness_id,
            Gossip {
                subject: actor.to_owned(),
                kind: RumourTopic::Threat,
                intent: GossipIntent::Warn,
                about_person: true,
                confidence,
                origin_event: format!("{act}:{actor}:{:.2}", at.now_hours),
                depth: 0,
                holder: witness_id.clone(),
            },
        );
        let pressure = confidence * self.config.gossip.threat_pressure_per_credibility;
        self.feel_threat(agents, witness, actor, pressure, at);
    }

    /// A credible threat about `subject` reaches `npc`: survival pressure, and the `threat`
    /// goal reactions of its archetype.
    pub(in crate::social) fn feel_threat(
        &mut self,
        agents: &mut [SimulatedAgent],
        npc: usize,
        subject: &str,
        pressure: f64,
        at: &mut StepAt<'_>,
    ) {
        let survival = self.need(Role::Survival);
        let simulated = &mut agents[npc];
        shift(&mut simulated.agent, survival, -pressure);
        let created = simulated
            .layers
            .get_mut()
            .and_then(|layers| layers.goals.as_mut())
            .map(|book| book.react("threat", subject, at.now_hours))
            .unwrap_or_default();
        let id = simulated.agent.id.clone();
        at.goals_created(&id, created);
    }
}
