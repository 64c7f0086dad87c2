//! World files (`config/worlds/*.yaml`): one zone's rooms and their neighbours (the room graph
//! tiers are computed over), its providers (the decide-contract provider spec plus a room and a
//! display name), its NPCs (the decide-contract agent spec plus room, name, archetype and an
//! optional reactive set) and what each weather means as contexts.
//!
//! Owns parsing and the structural checks (unique ids, neighbours and rooms that exist, specs
//! that compile); every error names the file, the path and the reason. It does not simulate:
//! [`crate::zone`] builds the running zone from a [`WorldFile`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use geppetto_core::vocabulary::Vocabulary;
use geppetto_core::wire::compile;
use geppetto_core::wire::request::{AgentSpec, ContextSpec, ProviderSpec};
use serde::Deserialize;

use crate::content::ContentError;

/// The demo village (`config/worlds/village/`, one file per section), embedded so `geppetto
/// demo` runs from any directory: its name and its files with their text.
pub const EMBEDDED_VILLAGE: (&str, &[(&str, &str)]) = (
    "config/worlds/village",
    &[
        (
            "config/worlds/village/npcs.yaml",
            include_str!("../../../config/worlds/village/npcs.yaml"),
        ),
        (
            "config/worlds/village/providers.yaml",
            include_str!("../../../config/worlds/village/providers.yaml"),
        ),
        (
            "config/worlds/village/residents.yaml",
            include_str!("../../../config/worlds/village/residents.yaml"),
        ),
        (
            "config/worlds/village/rooms.yaml",
            include_str!("../../../config/worlds/village/rooms.yaml"),
        ),
        (
            "config/worlds/village/world.yaml",
            include_str!("../../../config/worlds/village/world.yaml"),
        ),
    ],
);

/// The second shipped world, a harbour town (`config/worlds/harbour/`), embedded so
/// `simulate --world harbour` runs from any directory.
pub const EMBEDDED_HARBOUR: (&str, &[(&str, &str)]) = (
    "config/worlds/harbour",
    &[
        (
            "config/worlds/harbour/providers.yaml",
            include_str!("../../../config/worlds/harbour/providers.yaml"),
        ),
        (
            "config/worlds/harbour/residents.yaml",
            include_str!("../../../config/worlds/harbour/residents.yaml"),
        ),
        (
            "config/worlds/harbour/rooms.yaml",
            include_str!("../../../config/worlds/harbour/rooms.yaml"),
        ),
        (
            "config/worlds/harbour/world.yaml",
            include_str!("../../../config/worlds/harbour/world.yaml"),
        ),
    ],
);

/// The embedded demo village, parsed and checked.
pub fn embedded_village() -> Result<WorldFile, ContentError> {
    let (world, files) = EMBEDDED_VILLAGE;
    parse_world_parts(world, files)
}

/// The shipped world called `name` (`village`, `harbour`), parsed and checked; none for another
/// name.
pub fn shipped_world(name: &str) -> Option<Result<WorldFile, ContentError>> {
    let (world, files) = match name {
        "village" => EMBEDDED_VILLAGE,
        "harbour" => EMBEDDED_HARBOUR,
        _ => return None,
    };
    Some(parse_world_parts(world, files))
}

/// Default game time a zone starts at, in ticks (07:00 with one-minute ticks).
pub const DEFAULT_START_GAME_TIME: u64 = 7 * 60;

fn default_start() -> u64 {
    DEFAULT_START_GAME_TIME
}

/// A room and the rooms one step away.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RoomSpec {
    /// Unique id.
    pub id: String,
    /// Display name ("the forge").
    #[serde(default)]
    pub name: Option<String>,
    /// Adjacent rooms (the graph is made undirected).
    #[serde(default)]
    pub neighbours: Vec<String>,
}

/// A provider placed in a room.
#[derive(Clone, Debug, Deserialize)]
pub struct PlacedProvider {
    /// The room it is in.
    pub room: String,
    /// Display name.
    #[serde(default)]
    pub name: Option<String>,
    /// The decide-contract provider.
    #[serde(flatten)]
    pub spec: ProviderSpec,
}

/// An NPC: the decide-contract agent plus where it lives and who it is.
#[derive(Clone, Debug, Deserialize)]
pub struct NpcSpec {
    /// Display name ("Bram the smith").
    #[serde(default)]
    pub name: Option<String>,
    /// Archetype, for the archetype circuit breaker and the inspector.
    #[serde(default)]
    pub archetype: Option<String>,
    /// The room it starts in.
    pub room: String,
    /// A reactive set by embedded name or file path.
    #[serde(default)]
    pub reactive_set: Option<String>,
    /// The decide-contract agent.
    #[serde(flatten)]
    pub agent: AgentSpec,
}

/// An NPC built from an archetype (`config/archetypes/`): it states only what differs.
#[derive(Clone, Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ResidentSpec {
    /// Unique id (among NPCs and residents).
    pub id: String,
    /// Display name.
    #[serde(default)]
    pub name: Option<String>,
    /// The archetype it is (needs, personality, schedule, goals, barks, reactive set, persona).
    pub archetype: String,
    /// The room it starts in.
    pub room: String,
    /// Where it starts.
    pub position: [f64; 2],
    /// Its own places for the schedule's placeholders (`workplace: forge`, `home: cottages`).
    #[serde(default)]
    pub places: BTreeMap<String, String>,
    /// Anything that differs from the archetype, in archetype form.
    #[serde(default)]
    pub overrides: serde_json::Value,
}

/// How a zone builds an NPC its world file does not hold — spawned by the game
/// (`npc_spawned`) or handed over by another zone (`npc_arrived`): a decide-contract NPC, or
/// `{"resident": {…}}` for an archetype resident. Kept as JSON in the zone's snapshot.
#[derive(Clone, Debug)]
pub enum SpawnRecord {
    /// A decide-contract NPC.
    Npc(NpcSpec),
    /// An archetype resident.
    Resident(ResidentSpec),
}

impl SpawnRecord {
    /// Reads a record; the error names the path inside it and what is wrong.
    pub fn parse(value: &serde_json::Value) -> Result<Self, (String, String)> {
        let failed = |error: serde_path_to_error::Error<serde_json::Error>| {
            (error.path().to_string(), error.into_inner().to_string())
        };
        match value.get("resident") {
            Some(resident) => serde_path_to_error::deserialize(resident)
                .map(Self::Resident)
                .map_err(failed)
                .map_err(|(path, reason)| (field_path("resident", &path), reason)),
            None => serde_path_to_error::deserialize(value)
                .map(Self::Npc)
                .map_err(failed),
        }
    }

    /// The NPC's id.
    pub fn id(&self) -> &str {
        match self {
            Self::Npc(spec) => &spec.agent.id,
            Self::Resident(spec) => &spec.id,
        }
    }
}

/// `inner` (a path inside `prefix`, as serde_path_to_error writes it: `.` for the value
/// itself) joined to `prefix`.
pub fn field_path(prefix: &str, inner: &str) -> String {
    match inner.trim_start_matches('.') {
        "" => prefix.to_owned(),
        rest => format!("{prefix}.{rest}"),
    }
}

/// A whole world file.
#[derive(Clone, Debug, Deserialize)]
pub struct WorldFile {
    /// Zone name (`[A-Za-z0-9._-]`).
    pub zone: String,
    /// World seed every per-NPC, per-tick seed derives from.
    #[serde(default)]
    pub seed: u64,
    /// Profile name.
    #[serde(default)]
    pub profile: Option<String>,
    /// Game time the zone starts at, in ticks.
    #[serde(default = "default_start")]
    pub start_game_time: u64,
    /// Rooms.
    pub rooms: Vec<RoomSpec>,
    /// Providers.
    #[serde(default)]
    pub providers: Vec<PlacedProvider>,
    /// NPCs given inline in the decide contract.
    #[serde(default)]
    pub npcs: Vec<NpcSpec>,
    /// NPCs built from archetypes.
    #[serde(default)]
    pub residents: Vec<ResidentSpec>,
    /// Contexts active under each weather (`weather_changed`).
    #[serde(default)]
    pub weather: BTreeMap<String, Vec<ContextSpec>>,
    /// A hash of the text the world was read from (each file's, in order): which world a
    /// snapshot was taken over. Set by the parsers, never read from the file.
    #[serde(skip)]
    pub fingerprint: String,
}

/// The fingerprint of a world read from `texts` (one, or a directory's files in order): an
/// XXH3-128 of each text's length and bytes, as 32 hex digits.
pub fn fingerprint<'a>(texts: impl IntoIterator<Item = &'a str>) -> String {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for text in texts {
        hasher.update(&(text.len() as u64).to_le_bytes());
        hasher.update(text.as_bytes());
    }
    format!("{:032x}", hasher.digest128())
}

fn invalid(file: &str, reason: impl Into<String>) -> ContentError {
    ContentError::Invalid {
        file: file.to_owned(),
        reason: reason.into(),
    }
}

/// Parses and checks a world file's text; `file` names it in errors.
pub fn parse_world_file(file: &str, text: &str) -> Result<WorldFile, ContentError> {
    let mut world: WorldFile = serde_saphyr::from_str(text).map_err(|e| {
        let message = e.to_string();
        invalid(file, message.strip_prefix("error: ").unwrap_or(&message))
    })?;
    check(file, &world)?;
    world.fingerprint = fingerprint([text]);
    Ok(world)
}

/// Parses and checks a world given as JSON (generated worlds: no YAML node budget applies).
pub fn parse_world_json(file: &str, text: &str) -> Result<WorldFile, ContentError> {
    let mut world: WorldFile =
        geppetto_core::wire::parse(text).map_err(|e| invalid(file, e.to_string()))?;
    check(file, &world)?;
    world.fingerprint = fingerprint([text]);
    Ok(world)
}

/// One file's share of a world split over a directory: any of a world file's sections.
#[derive(Debug, Default, Deserialize)]
struct WorldPart {
    #[serde(default)]
    zone: Option<String>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    profile: Option<String>,
    #[serde(default)]
    start_game_time: Option<u64>,
    #[serde(default)]
    rooms: Vec<RoomSpec>,
    #[serde(default)]
    providers: Vec<PlacedProvider>,
    #[serde(default)]
    npcs: Vec<NpcSpec>,
    #[serde(default)]
    residents: Vec<ResidentSpec>,
    #[serde(default)]
    weather: BTreeMap<String, Vec<ContextSpec>>,
}

/// Sets a scalar section once; a second file giving it is refused, naming both.
fn once<T>(
    slot: &mut Option<(T, String)>,
    value: Option<T>,
    field: &str,
    file: &str,
) -> Result<(), ContentError> {
    let Some(value) = value else {
        return Ok(());
    };
    if let Some((_, first)) = slot {
        return Err(invalid(file, format!("{field}: already given in {first}")));
    }
    *slot = Some((value, file.to_owned()));
    Ok(())
}

/// Parses and checks a world split over several files (`files`: name and text, joined in
/// that order); `world` names the whole in errors about the joined result. Lists are joined;
/// a scalar section (zone, seed, profile, start_game_time) or a weather may be given once.
pub fn parse_world_parts(world: &str, files: &[(&str, &str)]) -> Result<WorldFile, ContentError> {
    let (mut zone, mut seed, mut profile, mut start) = (None, None, None, None);
    let mut joined = WorldPart::default();
    let mut weather_from: BTreeMap<String, String> = BTreeMap::new();
    for (file, text) in files {
        let part: WorldPart = serde_saphyr::from_str(text).map_err(|e| {
            let message = e.to_string();
            invalid(file, message.strip_prefix("error: ").unwrap_or(&message))
        })?;
        once(&mut zone, part.zone, "zone", file)?;
        once(&mut seed, part.seed, "seed", file)?;
        once(&mut profile, part.profile, "profile", file)?;
        once(&mut start, part.start_game_time, "start_game_time", file)?;
        joined.rooms.extend(part.rooms);
        joined.providers.extend(part.providers);
        joined.npcs.extend(part.npcs);
        joined.residents.extend(part.residents);
        for (name, contexts) in part.weather {
            if let Some(first) = weather_from.insert(name.clone(), (*file).to_owned()) {
                return Err(invalid(
                    file,
                    format!("weather.{name}: already given in {first}"),
                ));
            }
            joined.weather.insert(name, contexts);
        }
    }
    let world_file = WorldFile {
        zone: zone
            .map(|(zone, _)| zone)
            .ok_or_else(|| invalid(world, "zone: no file names the zone"))?,
        seed: seed.map_or(0, |(seed, _)| seed),
        profile: profile.map(|(profile, _)| profile),
        start_game_time: start.map_or(DEFAULT_START_GAME_TIME, |(start, _)| start),
        rooms: joined.rooms,
        providers: joined.providers,
        npcs: joined.npcs,
        residents: joined.residents,
        weather: joined.weather,
        fingerprint: fingerprint(files.iter().map(|(_, text)| *text)),
    };
    check(world, &world_file)?;
    Ok(world_file)
}

/// The world at `path` (a file or a directory; `worlds/town` may name `worlds/town.yaml`), or
/// a shipped one by name (`village`, `harbour`) when no such path exists.
pub fn load_world(path: &str) -> Result<WorldFile, ContentError> {
    if !Path::new(path).exists()
        && let Some(shipped) = shipped_world(path)
    {
        return shipped;
    }
    let with_extension = format!("{path}.yaml");
    let file = if !Path::new(path).exists() && Path::new(&with_extension).is_file() {
        with_extension.as_str()
    } else {
        path
    };
    load_world_file(Path::new(file))
}

/// Reads, parses and checks a world: one YAML file, or a directory whose `*.yaml` files are
/// its sections (joined in file-name order).
pub fn load_world_file(path: &Path) -> Result<WorldFile, ContentError> {
    let name = path.display().to_string();
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|source| ContentError::Read {
            file: path.display().to_string(),
            source,
        })
    };
    if !path.is_dir() {
        return parse_world_file(&name, &read(path)?);
    }
    let listing = std::fs::read_dir(path).map_err(|source| ContentError::Read {
        file: name.clone(),
        source,
    })?;
    let mut files: Vec<std::path::PathBuf> = listing
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    let texts = files
        .iter()
        .map(|file| Ok((file.display().to_string(), read(file)?)))
        .collect::<Result<Vec<_>, ContentError>>()?;
    let parts: Vec<(&str, &str)> = texts
        .iter()
        .map(|(file, text)| (file.as_str(), text.as_str()))
        .collect();
    parse_world_parts(&name, &parts)
}

fn check(file: &str, world: &WorldFile) -> Result<(), ContentError> {
    geppetto_storage::ZoneName::new(world.zone.clone())
        .map_err(|e| invalid(file, format!("zone: {e}")))?;
    let mut rooms = BTreeSet::new();
    for (i, room) in world.rooms.iter().enumerate() {
        if !rooms.insert(room.id.as_str()) {
            return Err(invalid(
                file,
                format!("rooms[{i}].id: duplicate room `{}`", room.id),
            ));
        }
    }
    for (i, room) in world.rooms.iter().enumerate() {
        for (j, neighbour) in room.neighbours.iter().enumerate() {
            if !rooms.contains(neighbour.as_str()) {
                return Err(invalid(
                    file,
                    format!("rooms[{i}].neighbours[{j}]: unknown room `{neighbour}`"),
                ));
            }
        }
    }
    let mut vocabulary = Vocabulary::new();
    let mut providers = BTreeSet::new();
    for (i, provider) in world.providers.iter().enumerate() {
        let path = format!("providers[{i}]");
        if !rooms.contains(provider.room.as_str()) {
            return Err(invalid(
                file,
                format!("{path}.room: unknown room `{}`", provider.room),
            ));
        }
        if !providers.insert(provider.spec.id.as_str()) {
            return Err(invalid(
                file,
                format!("{path}.id: duplicate provider `{}`", provider.spec.id),
            ));
        }
        compile::provider(&path, &provider.spec, &mut vocabulary)
            .map_err(|e| invalid(file, e.to_string()))?;
    }
    let mut npcs = BTreeSet::new();
    for (i, npc) in world.npcs.iter().enumerate() {
        let path = format!("npcs[{i}]");
        check_npc(&path, npc, &rooms, &mut vocabulary).map_err(|reason| invalid(file, reason))?;
        if !npcs.insert(npc.agent.id.as_str()) {
            return Err(invalid(
                file,
                format!("{path}.id: duplicate NPC `{}`", npc.agent.id),
            ));
        }
    }
    for (i, resident) in world.residents.iter().enumerate() {
        let path = format!("residents[{i}]");
        if !rooms.contains(resident.room.as_str()) {
            return Err(invalid(
                file,
                format!("{path}.room: unknown room `{}`", resident.room),
            ));
        }
        if !npcs.insert(resident.id.as_str()) {
            return Err(invalid(
                file,
                format!("{path}.id: duplicate NPC `{}`", resident.id),
            ));
        }
        if !resident.position.iter().all(|c| c.is_finite()) {
            return Err(invalid(
                file,
                format!("{path}.position: must be finite numbers"),
            ));
        }
    }
    Ok(())
}

/// Checks one NPC spec against the rooms; the error names `path`.
pub fn check_npc(
    path: &str,
    npc: &NpcSpec,
    rooms: &BTreeSet<&str>,
    vocabulary: &mut Vocabulary,
) -> Result<(), String> {
    if !rooms.contains(npc.room.as_str()) {
        return Err(format!("{path}.room: unknown room `{}`", npc.room));
    }
    compile::agent(path, &npc.agent, vocabulary).map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> String {
        parse_world_file("w.yaml", text)
            .expect_err("refused")
            .to_string()
    }

    #[test]
    fn the_shipped_harbour_loads_as_its_directory_does() {
        let world = shipped_world("harbour")
            .expect("shipped")
            .expect("harbour loads");
        assert_eq!(world.zone, "harbour");
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/worlds/harbour");
        assert_eq!(load_world_file(&dir).expect("loads").rooms, world.rooms);
        assert!(world.npcs.is_empty() && world.residents.len() >= 30);
        assert!(shipped_world("atlantis").is_none());
    }

    #[test]
    fn the_embedded_village_loads() {
        let world = embedded_village().expect("village loads");
        assert_eq!(world.zone, "village");
        assert!((8..=12).contains(&world.npcs.len()), "{}", world.npcs.len());
        assert!(world.providers.len() >= 6);
    }

    #[test]
    fn a_world_directory_joins_its_files_and_refuses_a_scalar_given_twice() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/worlds/village");
        let from_disk = load_world_file(&dir).expect("the village directory loads");
        let embedded = embedded_village().expect("embedded");
        assert_eq!(from_disk.rooms, embedded.rooms);
        assert_eq!(from_disk.npcs.len() + from_disk.residents.len(), 24);
        let a = (
            "a.yaml",
            "zone: z\nrooms: [ { id: r1, neighbours: [r2] } ]\n",
        );
        let b = ("b.yaml", "rooms: [ { id: r2 } ]\nweather: { rain: [] }\n");
        let joined = parse_world_parts("w", &[a, b]).expect("joined");
        assert_eq!(joined.rooms.len(), 2);
        assert_eq!(joined.zone, "z");
        let again = ("c.yaml", "zone: y\n");
        let error = parse_world_parts("w", &[a, b, again])
            .expect_err("two zones")
            .to_string();
        assert!(
            error.starts_with("c.yaml") && error.contains("zone: already given in a.yaml"),
            "{error}"
        );
        let rain = ("d.yaml", "weather: { rain: [] }\n");
        let error = parse_world_parts("w", &[a, b, rain])
            .expect_err("two rains")
            .to_string();
        assert!(
            error.contains("weather.rain: already given in b.yaml"),
            "{error}"
        );
        let error = parse_world_parts("w", &[b])
            .expect_err("no zone")
            .to_string();
        assert!(
            error.starts_with("w") && error.contains("no file names the zone"),
            "{error}"
        );
    }

    #[test]
    fn errors_name_file_path_and_reason() {
        let base = "zone: z\nrooms: [ { id: a, neighbours: [b] } ]\n";
        assert!(refused(base).contains("w.yaml: rooms[0].neighbours[0]: unknown room `b`"));
        let text =
            "zone: z\nrooms: [ { id: a } ]\nnpcs: [ { id: nia, room: q, position: [0,0] } ]\n";
        assert!(
            refused(text).contains("npcs[0].room: unknown room `q`"),
            "{}",
            refused(text)
        );
        let text =
            "zone: z\nrooms: [ { id: a } ]\nnpcs: [ { id: '', room: a, position: [0,0] } ]\n";
        assert!(refused(text).contains("npcs[0].id"), "{}", refused(text));
        let text = "zone: 'bad zone'\nrooms: []\n";
        assert!(refused(text).contains("zone:"));
        let text = "zone: z\nrooms: [ { id: a }, { id: a } ]\n";
        assert!(refused(text).contains("rooms[1].id: duplicate room"));
        let text = "zone: z\nrooms: [ { id: a } ]\nproviders: [ { id: p, room: a, position: [0], capacity: 1 } ]\n";
        assert!(refused(text).contains("providers[0].position"));
    }
}
