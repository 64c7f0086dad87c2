//! Turns parsed wire specs into engine values, checking what types cannot: finite numbers,
//! bounds, unique ids, well-formed preconditions and curves. Every refusal names the JSON path
//! of the offending value.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use super::WireError;
use super::read::Elements;
use super::request::{
    ActionSpec, AgentSpec, CommitmentSpec, ConsiderationSpec, CurveSpec, OpSpec, PreconditionSpec,
    ProviderSpec, UpdaterSpec, WorldSpec,
};
use crate::decision::agent::{Agent, Commitment};
use crate::decision::consideration::{Consideration, ConsiderationBehaviour, Updater};
use crate::decision::curve::{ResponseCurve, SampledCurve, Shape};
use crate::decision::world::{
    ActionEffects, AdvertisedAction, CompareOp, Context, Position, Precondition, Provider, World,
};
use crate::rng::stable_hash;
use crate::vocabulary::{Symbol, Vocabulary};
use thin_vec::ThinVec;

fn finite(path: &str, value: f64) -> Result<f64, WireError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(WireError::at(path, "must be a finite number"))
    }
}

fn non_negative(path: &str, value: f64) -> Result<f64, WireError> {
    if finite(path, value)? < 0.0 {
        Err(WireError::at(path, "must not be negative"))
    } else {
        Ok(value)
    }
}

fn non_empty_id(path: &str, id: &str) -> Result<(), WireError> {
    if id.is_empty() {
        Err(WireError::at(path, "must not be empty"))
    } else {
        Ok(())
    }
}

fn position(path: &str, coordinates: &[f64]) -> Result<Position, WireError> {
    let position = match *coordinates {
        [x, y] => Position { x, y, z: 0.0 },
        [x, y, z] => Position { x, y, z },
        _ => return Err(WireError::at(path, "must be [x, y] or [x, y, z]")),
    };
    for (i, value) in [position.x, position.y, position.z].into_iter().enumerate() {
        finite(&format!("{path}[{i}]"), value)?;
    }
    Ok(position)
}

/// Collects `items` into a vector of exactly their number, or their first error (collecting
/// into a `Result` cannot know the number, and rounds a short list up to four).
fn exactly<T, List: ExactList<T>>(
    items: impl ExactSizeIterator<Item = Result<T, WireError>>,
) -> Result<List, WireError> {
    let mut collected = List::with_capacity(items.len());
    for item in items {
        collected.push(item?);
    }
    Ok(collected)
}

/// A list [`exactly`] fills: a `Vec`, or the `ThinVec` an agent keeps its lists in.
trait ExactList<T> {
    fn with_capacity(capacity: usize) -> Self;
    fn push(&mut self, item: T);
}

impl<T> ExactList<T> for Vec<T> {
    fn with_capacity(capacity: usize) -> Self {
        Vec::with_capacity(capacity)
    }
    fn push(&mut self, item: T) {
        Vec::push(self, item);
    }
}

impl<T> ExactList<T> for ThinVec<T> {
    fn with_capacity(capacity: usize) -> Self {
        ThinVec::with_capacity(capacity)
    }
    fn push(&mut self, item: T) {
        ThinVec::push(self, item);
    }
}

/// The ids of an array's elements seen so far, kept as their hashes (eight bytes an id
/// whatever its length): a repeated hash is confirmed against the ids already built.
#[derive(Default)]
pub(crate) struct SeenIds(HashSet<u64>);

impl SeenIds {
    /// Whether `id` repeats one of `built`, the ids before it.
    pub(crate) fn repeats<'a>(
        &mut self,
        id: &str,
        mut built: impl Iterator<Item = &'a str>,
    ) -> bool {
        !self.0.insert(stable_hash(id)) && built.any(|earlier| earlier == id)
    }
}

fn symbol_map<List: ExactList<(Symbol, f64)>>(
    path: &str,
    map: &BTreeMap<String, f64>,
    vocabulary: &mut Vocabulary,
    check: fn(&str, f64) -> Result<f64, WireError>,
) -> Result<List, WireError> {
    exactly(map.iter().map(|(name, value)| {
        Ok((
            vocabulary.intern(name),
            check(&format!("{path}.{name}"), *value)?,
        ))
    }))
}

fn symbols<List: FromIterator<Symbol>>(names: &[String], vocabulary: &mut Vocabulary) -> List {
    names.iter().map(|name| vocabulary.intern(name)).collect()
}

fn curve(path: &str, spec: &CurveSpec) -> Result<ResponseCurve, WireError> {
    let shape = |shape: Shape| {
        shape
            .validate()
            .map_err(|e| WireError::at(path, e.to_string()))?;
        Ok(ResponseCurve::Shape(shape))
    };
    match spec {
        CurveSpec::Convex { exponent } => Ok(ResponseCurve::Convex {
            exponent: non_negative(&format!("{path}.exponent"), *exponent)?,
        }),
        CurveSpec::Linear => Ok(ResponseCurve::Linear),
        CurveSpec::Step {
            threshold,
            below,
            above,
        } => Ok(ResponseCurve::Step {
            threshold: finite(&format!("{path}.threshold"), *threshold)?,
            below: finite(&format!("{path}.below"), *below)?,
            above: finite(&format!("{path}.above"), *above)?,
        }),
        CurveSpec::Logistic {
            steepness,
            midpoint,
        } => Ok(ResponseCurve::Logistic {
            steepness: finite(&format!("{path}.steepness"), *steepness)?,
            midpoint: finite(&format!("{path}.midpoint"), *midpoint)?,
        }),
        CurveSpec::Polynomial(params) => shape(Shape::Polynomial(*params)),
        CurveSpec::Logit(params) => shape(Shape::Logit(*params)),
        CurveSpec::Gaussian(params) => shape(Shape::Gaussian(*params)),
        CurveSpec::Sampled { keys } => {
            let keys = keys.iter().map(|[x, y]| (*x, *y)).collect();
            let sampled = SampledCurve::new(keys)
                .map_err(|e| WireError::at(&format!("{path}.keys"), e.to_string()))?;
            Ok(ResponseCurve::Shape(Shape::Sampled(sampled)))
        }
        CurveSpec::Unknown => Ok(ResponseCurve::Unknown),
    }
}

fn updater(path: &str, spec: &UpdaterSpec) -> Result<Updater, WireError> {
    Ok(match spec {
        UpdaterSpec::LinearDecay { rate } => Updater::LinearDecay {
            rate: finite(&format!("{path}.rate"), *rate)?,
        },
        UpdaterSpec::LinearRegen { rate } => Updater::LinearRegen {
            rate: finite(&format!("{path}.rate"), *rate)?,
        },
        UpdaterSpec::EventDriven => Updater::EventDriven,
        UpdaterSpec::PerceptionDriven => Updater::PerceptionDriven,
        UpdaterSpec::RelationshipDriven => Updater::RelationshipDriven,
        UpdaterSpec::ContextAggregate => Updater::ContextAggregate,
    })
}

fn consideration(
    path: &str,
    spec: &ConsiderationSpec,
    vocabulary: &mut Vocabulary,
) -> Result<Consideration, WireError> {
    non_empty_id(&format!("{path}.name"), &spec.name)?;
    let min = finite(&format!("{path}.min"), spec.min)?;
    let max = finite(&format!("{path}.max"), spec.max)?;
    let value = finite(&format!("{path}.value"), spec.value)?;
    if max > min && !(min..=max).contains(&value) {
        return Err(WireError::at(
            &format!("{path}.value"),
            format!("{value} is outside [min, max] = [{min}, {max}]"),
        ));
    }
    let critical_threshold = spec
        .critical_threshold
        .map(|threshold| finite(&format!("{path}.critical_threshold"), threshold))
        .transpose()?;
    let collapse_threshold = spec
        .collapse_threshold
        .map(|threshold| finite(&format!("{path}.collapse_threshold"), threshold))
        .transpose()?;
    Ok(Consideration {
        name: vocabulary.intern(&spec.name),
        value,
        weight: non_negative(&format!("{path}.weight"), spec.weight)?,
        behaviour: Arc::new(ConsiderationBehaviour {
            min,
            max,
            curve: curve(&format!("{path}.curve"), &spec.curve)?,
            updater: updater(&format!("{path}.updater"), &spec.updater)?,
            critical_threshold,
            collapse_threshold,
        }),
    })
}

fn commitment(
    path: &str,
    spec: &CommitmentSpec,
    vocabulary: &mut Vocabulary,
) -> Result<Commitment, WireError> {
    let expires_at = spec
        .expires_at
        .map(|at| finite(&format!("{path}.expires_at"), at))
        .transpose()?;
    Ok(Commitment {
        forbid_tags: symbols(&spec.forbid_tags, vocabulary),
        expires_at,
    })
}

/// Builds an agent; `path` is where it sits in the request (`agent`, `agents[3]`).
pub fn agent(
    path: &str,
    spec: &AgentSpec,
    vocabulary: &mut Vocabulary,
) -> Result<Agent, WireError> {
    non_empty_id(&format!("{path}.id"), &spec.id)?;
    let mut seen = HashSet::new();
    let mut considerations = ThinVec::with_capacity(spec.considerations.len());
    for (i, c) in spec.considerations.iter().enumerate() {
        let item_path = format!("{path}.considerations[{i}]");
        if !seen.insert(c.name.as_str()) {
            return Err(WireError::at(
                &format!("{item_path}.name"),
                format!("duplicate consideration `{}`", c.name),
            ));
        }
        considerations.push(consideration(&item_path, c, vocabulary)?);
    }
    let commitments = exactly(
        spec.commitments
            .iter()
            .enumerate()
            .map(|(i, c)| commitment(&format!("{path}.commitments[{i}]"), c, vocabulary)),
    )?;
    Ok(Agent {
        id: spec.id.clone(),
        position: position(&format!("{path}.position"), &spec.position)?,
        facts: symbols(&spec.facts, vocabulary),
        schedule: None,
        just_completed: None,
        goal_bonuses: ThinVec::new(),
        running_out: ThinVec::new(),
        considerations,
        tag_modifiers: symbol_map(
            &format!("{path}.tag_modifiers"),
            &spec.tag_modifiers,
            vocabulary,
            non_negative,
        )?,
        domain_preferences: symbol_map(
            &format!("{path}.domain_preferences"),
            &spec.domain_preferences,
            vocabulary,
            non_negative,
        )?,
        resources: symbol_map(
            &format!("{path}.resources"),
            &spec.resources,
            vocabulary,
            finite,
        )?,
        capabilities: symbols(&spec.capabilities, vocabulary),
        commitments,
    })
}

fn precondition(
    path: &str,
    spec: &PreconditionSpec,
    vocabulary: &mut Vocabulary,
) -> Result<Precondition, WireError> {
    const FORMS: &str = "must be exactly one of {consideration, op, value}, {capability}, {resource, min}, {provider_state}, {fact}";
    let p = spec;
    let bare = p.op.is_none() && p.value.is_none() && p.min.is_none();
    let precondition = match (
        &p.consideration,
        &p.capability,
        &p.resource,
        &p.provider_state,
        &p.fact,
    ) {
        (Some(name), None, None, None, None) if p.min.is_none() => {
            let (Some(op), Some(value)) = (p.op, p.value) else {
                return Err(WireError::at(
                    path,
                    "a consideration precondition needs `op` and `value`",
                ));
            };
            let op = match op {
                OpSpec::Lt => CompareOp::Lt,
                OpSpec::Le => CompareOp::Le,
                OpSpec::Gt => CompareOp::Gt,
                OpSpec::Ge => CompareOp::Ge,
                OpSpec::Eq => CompareOp::Eq,
                OpSpec::Ne => CompareOp::Ne,
            };
            Precondition::Consideration {
                name: vocabulary.intern(name),
                op,
                value: finite(&format!("{path}.value"), value)?,
            }
        }
        (None, Some(capability), None, None, None) if bare => {
            Precondition::Capability(vocabulary.intern(capability))
        }
        (None, None, Some(resource), None, None) if p.op.is_none() && p.value.is_none() => {
            let Some(min) = p.min else {
                return Err(WireError::at(path, "a resource precondition needs `min`"));
            };
            Precondition::Resource {
                name: vocabulary.intern(resource),
                min: finite(&format!("{path}.min"), min)?,
            }
        }
        (None, None, None, Some(state), None) if bare => {
            Precondition::ProviderState(vocabulary.intern(state))
        }
        (None, None, None, None, Some(fact)) if bare => Precondition::Fact(vocabulary.intern(fact)),
        _ => return Err(WireError::at(path, FORMS)),
    };
    Ok(precondition)
}

fn action(
    path: &str,
    spec: &ActionSpec,
    vocabulary: &mut Vocabulary,
) -> Result<AdvertisedAction, WireError> {
    non_empty_id(&format!("{path}.id"), &spec.id)?;
    let preconditions = exactly(
        spec.preconditions
            .iter()
            .enumerate()
            .map(|(i, p)| precondition(&format!("{path}.preconditions[{i}]"), p, vocabulary)),
    )?;
    Ok(AdvertisedAction {
        id: spec.id.clone(),
        tags: symbols(&spec.tags, vocabulary),
        domain: spec
            .domain
            .as_deref()
            .map(|domain| vocabulary.intern(domain)),
        deltas: symbol_map(&format!("{path}.deltas"), &spec.deltas, vocabulary, finite)?,
        duration_hours: non_negative(&format!("{path}.duration_hours"), spec.duration_hours)?,
        intrinsic_priority: finite(
            &format!("{path}.intrinsic_priority"),
            spec.intrinsic_priority,
        )?,
        radius: spec
            .radius
            .map(|radius| non_negative(&format!("{path}.radius"), radius))
            .transpose()?,
        effects: ActionEffects {
            adds: symbols(&spec.adds_facts, vocabulary),
            removes: symbols(&spec.removes_facts, vocabulary),
            yields: symbol_map(
                &format!("{path}.yields"),
                &spec.yields,
                vocabulary,
                non_negative,
            )?,
        },
        capacity: spec.capacity,
        occupancy: spec.occupancy,
        preconditions,
        costs: symbol_map(
            &format!("{path}.costs"),
            &spec.costs,
            vocabulary,
            non_negative,
        )?,
    })
}

/// Builds a provider; `path` is where it sits (`world.providers[2]`).
pub fn provider(
    path: &str,
    spec: &ProviderSpec,
    vocabulary: &mut Vocabulary,
) -> Result<Provider, WireError> {
    non_empty_id(&format!("{path}.id"), &spec.id)?;
    let mut seen = HashSet::new();
    let mut actions = Vec::with_capacity(spec.actions.len());
    for (i, a) in spec.actions.iter().enumerate() {
        let item_path = format!("{path}.actions[{i}]");
        if !seen.insert(a.id.as_str()) {
            return Err(WireError::at(
                &format!("{item_path}.id"),
                format!("duplicate action `{}` in this provider", a.id),
            ));
        }
        actions.push(action(&item_path, a, vocabulary)?);
    }
    Ok(Provider {
        id: spec.id.clone(),
        position: position(&format!("{path}.position"), &spec.position)?,
        capacity: spec.capacity,
        occupants: spec.occupants,
        state: spec.state.as_deref().map(|state| vocabulary.intern(state)),
        actions,
    })
}

/// Builds the world; its providers come from `P`, an array of specs or the raw text of one
/// read a provider at a time.
pub fn world<P: Elements<ProviderSpec>>(
    path: &str,
    spec: &WorldSpec<P>,
    vocabulary: &mut Vocabulary,
) -> Result<World, WireError> {
    let now_hours = finite(&format!("{path}.now_hours"), spec.now_hours)?;
    let contexts = exactly(spec.contexts.iter().enumerate().map(|(i, c)| {
        let item_path = format!("{path}.contexts[{i}]");
        Ok(Context {
            name: vocabulary.intern(&c.name),
            tag_multipliers: symbol_map(
                &format!("{item_path}.tag_multipliers"),
                &c.tag_multipliers,
                vocabulary,
                non_negative,
            )?,
        })
    }))?;
    let providers_path = format!("{path}.providers");
    let mut seen = SeenIds::default();
    let mut providers: Vec<Provider> = Vec::new();
    spec.providers.each(&providers_path, |i, p| {
        let item_path = format!("{providers_path}[{i}]");
        if seen.repeats(&p.id, providers.iter().map(|q| q.id.as_str())) {
            return Err(WireError::at(
                &format!("{item_path}.id"),
                format!("duplicate provider `{}`", p.id),
            ));
        }
        providers.push(provider(&item_path, p, vocabulary)?);
        Ok(())
    })?;
    Ok(World {
        now_hours,
        contexts,
        providers,
        perceptions: symbol_map(
            &format!("{path}.perceptions"),
            &spec.perceptions,
            vocabulary,
            finite,
        )?,
        relationships: symbol_map(
            &format!("{path}.relationships"),
            &spec.relationships,
            vocabulary,
            finite,
        )?,
        context_aggregates: symbol_map(
            &format!("{path}.context_aggregates"),
            &spec.context_aggregates,
            vocabulary,
            finite,
        )?,
    })
}
