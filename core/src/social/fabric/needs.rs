//! The five needs social life moves, by [`Role`] (social, economic, survival, purpose,
//! ambition): a role's delta, a need's level and a shift by a fraction of its range. Which
//! symbol plays which role is the fabric's ([`super::state`]).

use crate::decision::agent::Agent;
use crate::social::interaction::NeedDeltas;
use crate::vocabulary::Symbol;

#[derive(Clone, Copy, Debug)]
pub(in crate::social) enum Role {
    Social,
    Economic,
    Survival,
    Purpose,
    Ambition,
}

pub(in crate::social) const ROLES: [Role; 5] = [
    Role::Social,
    Role::Economic,
    Role::Survival,
    Role::Purpose,
    Role::Ambition,
];

pub(in crate::social) fn role_delta(deltas: &NeedDeltas, role: Role) -> f64 {
    match role {
        Role::Social => deltas.social,
        Role::Economic => deltas.economic,
        Role::Survival => deltas.survival,
        Role::Purpose => deltas.purpose,
        Role::Ambition => deltas.ambition,
    }
}

/// A need's level in [0, 1].
pub(in crate::social) fn level(agent: &Agent, need: Symbol) -> Option<f64> {
    agent.consideration(need).map(|c| {
        if c.max() > c.min() {
            ((c.value - c.min()) / (c.max() - c.min())).clamp(0.0, 1.0)
        } else {
            0.0
        }
    })
}

/// Moves a need by `fraction` of its range.
pub(in crate::social) fn shift(agent: &mut Agent, need: Symbol, fraction: f64) {
    if let Some(c) = agent.considerations.iter_mut().find(|c| c.name == need) {
        c.value += fraction * (c.max() - c.min());
        c.clamp_value();
    }
}
