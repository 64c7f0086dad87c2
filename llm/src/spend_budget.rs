//! The `[llm.budget]` allowances at work: rolling windows of an hour and a day over tokens
//! and money, for the whole budget and for each configured share (a seam, an NPC class, a
//! tier), with part of every allowance kept for witnessed requests. Admission is exact: a call
//! reserves its estimated size (prompt estimate plus completion cap) in every window that
//! applies before it starts, and is refused if any would pass its limit (a request nobody
//! witnessed stops short of `witnessed_reserve` of each); when it ends, the
//! reservation is settled to what the server counted. So concurrent calls never spend past an
//! allowance as long as the server counts no more than was reserved. Every scope a call
//! belongs to is counted whether or not it has a share, so what each spent is there to read
//! ([`SpendBudget::spent`]) and an allowance set while running ([`SpendBudget::set_allowances`])
//! counts what was spent before it. This module owns the windows and the arithmetic; the time
//! is given (`now`), never read.

use std::collections::{BTreeMap, HashMap, VecDeque};

use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

use crate::config::{BudgetConfig, ConfigError};
use crate::request::{Priority, Seam, SpendTags};
use crate::usage::nanos_of_money;

/// The span of a window's buckets: spend is filed by the minute it was reserved in, and a
/// minute leaves a window only once all of it is older than the window (so a window may hold
/// up to a minute more than its span, never less: it errs toward refusing).
pub const BUCKET: Duration = Duration::from_secs(60);
/// The short window.
pub const HOUR: Duration = Duration::from_secs(3600);
/// The long window.
pub const DAY: Duration = Duration::from_secs(86_400);

/// Tokens and nanos.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Amount {
    /// Prompt and completion tokens together.
    pub tokens: u64,
    /// Money in nanos of the price table's unit.
    pub nanos: u64,
}

impl Amount {
    fn plus(self, other: Amount) -> Amount {
        Amount {
            tokens: self.tokens.saturating_add(other.tokens),
            nanos: self.nanos.saturating_add(other.nanos),
        }
    }

    fn minus(self, other: Amount) -> Amount {
        Amount {
            tokens: self.tokens.saturating_sub(other.tokens),
            nanos: self.nanos.saturating_sub(other.nanos),
        }
    }
}

/// What a window may hold: tokens and nanos, each optional.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Limit {
    tokens: Option<u64>,
    nanos: Option<u64>,
}

impl Limit {
    fn scaled(self, fraction: f64) -> Limit {
        let scale = |value: u64| (value as f64 * fraction).floor() as u64;
        Limit {
            tokens: self.tokens.map(scale),
            nanos: self.nanos.map(scale),
        }
    }

    fn admits(&self, used: Amount, more: Amount) -> bool {
        let fits = |limit: Option<u64>, used: u64, more: u64| {
            limit.is_none_or(|limit| used.saturating_add(more) <= limit)
        };
        fits(self.tokens, used.tokens, more.tokens) && fits(self.nanos, used.nanos, more.nanos)
    }
}

/// One rolling window: per-minute buckets and their running sum.
#[derive(Debug, Clone)]
struct Window {
    span: Duration,
    buckets: VecDeque<(u64, Amount)>,
    sum: Amount,
}

impl Window {
    fn new(span: Duration) -> Self {
        Self {
            span,
            buckets: VecDeque::new(),
            sum: Amount::default(),
        }
    }

    /// Drops the buckets wholly older than the window at minute `elapsed` from the origin.
    fn expire(&mut self, elapsed: Duration) {
        while let Some(&(minute, amount)) = self.buckets.front() {
            let end = BUCKET.saturating_mul(u32::try_from(minute + 1).unwrap_or(u32::MAX));
            if end + self.span > elapsed {
                break;
            }
            self.sum = self.sum.minus(amount);
            self.buckets.pop_front();
        }
    }

    fn add(&mut self, minute: u64, amount: Amount) {
        match self.buckets.back_mut() {
            Some((last, held)) if *last == minute => *held = held.plus(amount),
            _ => self.buckets.push_back((minute, amount)),
        }
        self.sum = self.sum.plus(amount);
    }

    /// Adds restored spend at `minute`, keeping the buckets in order (a minute before the last
    /// bucket joins the last one: it errs toward holding longer).
    fn restore(&mut self, minute: u64, amount: Amount) {
        let minute = self
            .buckets
            .back()
            .map_or(minute, |(last, _)| minute.max(*last));
        self.add(minute, amount);
    }

    /// Replaces `reserved` by `actual` in `minute`'s bucket, if it is still in the window.
    fn settle(&mut self, minute: u64, reserved: Amount, actual: Amount) {
        if let Some((_, held)) = self.buckets.iter_mut().rev().find(|(m, _)| *m == minute) {
            *held = held.minus(reserved).plus(actual);
            self.sum = self.sum.minus(reserved).plus(actual);
        }
    }
}

/// What an allowance applies to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// The whole budget.
    All,
    /// One seam's share.
    Seam(Seam),
    /// One NPC class's share.
    Class(String),
    /// One tier's share.
    Tier(String),
}

/// An hour and a day of one scope.
#[derive(Debug, Clone)]
struct Windows {
    hour: Window,
    day: Window,
}

impl Windows {
    fn both(&mut self) -> [&mut Window; 2] {
        [&mut self.hour, &mut self.day]
    }
}

/// Leave for one call, to be settled with what it spent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "a reservation must be settled or released"]
pub struct Reservation {
    id: u64,
}

#[derive(Debug, Clone)]
struct Held {
    minute: u64,
    scopes: Vec<Scope>,
    amount: Amount,
}

/// Which allowance refused a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The scope whose allowance is spent.
    pub scope: Scope,
}

/// The allowances of one worker. Not shared by itself: the worker holds it under a lock for
/// one reservation or settlement at a time.
#[derive(Debug)]
pub struct SpendBudget {
    origin: Instant,
    config: BudgetConfig,
    hour: Limit,
    day: Limit,
    reserve: f64,
    seams: BTreeMap<Seam, f64>,
    classes: BTreeMap<String, f64>,
    tiers: BTreeMap<String, f64>,
    windows: BTreeMap<Scope, Windows>,
    held: HashMap<u64, Held>,
    next_id: u64,
}

impl SpendBudget {
    /// The allowances `config` sets (none set: nothing is refused, all is counted), with
    /// windows starting at `origin`.
    #[must_use]
    pub fn from_config(config: &BudgetConfig, origin: Instant) -> Self {
        let mut budget = Self {
            origin,
            config: config.clone(),
            hour: Limit::default(),
            day: Limit::default(),
            reserve: 0.0,
            seams: BTreeMap::new(),
            classes: BTreeMap::new(),
            tiers: BTreeMap::new(),
            windows: BTreeMap::new(),
            held: HashMap::new(),
            next_id: 0,
        };
        budget.apply(config);
        budget
    }

    fn apply(&mut self, config: &BudgetConfig) {
        self.hour = Limit {
            tokens: config.tokens_per_hour,
            nanos: config.money_per_hour.map(nanos_of_money),
        };
        self.day = Limit {
            tokens: config.tokens_per_day,
            nanos: config.money_per_day.map(nanos_of_money),
        };
        self.reserve = config.witnessed_reserve;
        self.seams = (config.seams.iter())
            .filter_map(|(name, share)| Seam::from_wire(name).map(|seam| (seam, *share)))
            .collect();
        self.classes.clone_from(&config.classes);
        self.tiers.clone_from(&config.tiers);
        self.config = config.clone();
    }

    /// The allowances and shares in force.
    #[must_use]
    pub fn allowances(&self) -> &BudgetConfig {
        &self.config
    }

    /// Puts `config`'s allowances and shares in force from the next reservation on; what
    /// the windows hold stays (spend before the change counts against the new allowances).
    ///
    /// # Errors
    /// The `ConfigError` naming the field `config` cannot have; nothing changes then.
    pub fn set_allowances(&mut self, config: &BudgetConfig) -> Result<(), ConfigError> {
        config.validate()?;
        self.apply(config);
        Ok(())
    }

    /// What every scope counted so far holds in its hour and day windows at `now`.
    #[must_use]
    pub fn spent(&mut self, now: Instant) -> Vec<(Scope, Amount, Amount)> {
        let (elapsed, _) = self.minute(now);
        (self.windows.iter_mut())
            .map(|(scope, windows)| {
                windows.hour.expire(elapsed);
                windows.day.expire(elapsed);
                (scope.clone(), windows.hour.sum, windows.day.sum)
            })
            .collect()
    }

    /// The scopes a request is counted in, with the fraction of the allowances each may use
    /// (`None`: counted, not limited): the whole budget, then its seam, class and tier, limited
    /// where a share names them. A request nobody witnessed leaves `witnessed_reserve` of each
    /// to those somebody did.
    fn scopes(
        &self,
        seam: Seam,
        priority: Priority,
        tags: &SpendTags,
    ) -> Vec<(Scope, Option<f64>)> {
        let open = if priority == Priority::Witnessed {
            1.0
        } else {
            1.0 - self.reserve
        };
        let mut scopes = vec![
            (Scope::All, Some(1.0)),
            (Scope::Seam(seam), self.seams.get(&seam).copied()),
        ];
        if let Some(class) = &tags.class {
            scopes.push((
                Scope::Class(class.clone()),
                self.classes.get(class).copied(),
            ));
        }
        if let Some(tier) = &tags.tier {
            scopes.push((Scope::Tier(tier.clone()), self.tiers.get(tier).copied()));
        }
        for (_, fraction) in &mut scopes {
            *fraction = fraction.map(|fraction| fraction * open);
        }
        scopes
    }

    fn minute(&self, now: Instant) -> (Duration, u64) {
        let elapsed = now.saturating_duration_since(self.origin);
        (elapsed, elapsed.as_secs() / BUCKET.as_secs())
    }

    /// Reserves `amount` for a call of `seam` at `priority` for `tags`, at `now`.
    ///
    /// # Errors
    /// `Refused`, naming the first allowance (whole budget, seam, class, tier) it would pass.
    pub fn reserve(
        &mut self,
        now: Instant,
        seam: Seam,
        priority: Priority,
        tags: &SpendTags,
        amount: Amount,
    ) -> Result<Reservation, Refused> {
        let (elapsed, minute) = self.minute(now);
        let scopes = self.scopes(seam, priority, tags);
        for (scope, fraction) in &scopes {
            let windows = self
                .windows
                .entry(scope.clone())
                .or_insert_with(|| Windows {
                    hour: Window::new(HOUR),
                    day: Window::new(DAY),
                });
            windows.hour.expire(elapsed);
            windows.day.expire(elapsed);
            let Some(fraction) = fraction else {
                continue;
            };
            let (hour, day) = (self.hour.scaled(*fraction), self.day.scaled(*fraction));
            if !(hour.admits(windows.hour.sum, amount) && day.admits(windows.day.sum, amount)) {
                return Err(Refused {
                    scope: scope.clone(),
                });
            }
        }
        let scopes: Vec<Scope> = scopes.into_iter().map(|(scope, _)| scope).collect();
        for scope in &scopes {
            if let Some(windows) = self.windows.get_mut(scope) {
                for window in windows.both() {
                    window.add(minute, amount);
                }
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        self.held.insert(
            id,
            Held {
                minute,
                scopes,
                amount,
            },
        );
        Ok(Reservation { id })
    }

    /// Replaces a reservation by what the call spent (`Amount::default()` for a call that
    /// spent nothing).
    pub fn settle(&mut self, reservation: Reservation, actual: Amount) {
        let Some(held) = self.held.remove(&reservation.id) else {
            return;
        };
        for scope in &held.scopes {
            if let Some(windows) = self.windows.get_mut(scope) {
                for window in windows.both() {
                    window.settle(held.minute, held.amount, actual);
                }
            }
        }
    }

    /// What `scope` holds in its hour and day windows at `now` (spent and reserved).
    #[must_use]
    pub fn used(&mut self, scope: &Scope, now: Instant) -> (Amount, Amount) {
        let (elapsed, _) = self.minute(now);
        let none = (Amount::default(), Amount::default());
        self.windows.get_mut(scope).map_or(none, |windows| {
            windows.hour.expire(elapsed);
            windows.day.expire(elapsed);
            (windows.hour.sum, windows.day.sum)
        })
    }

    /// What every allowance holds at `now`, minute by minute, for saving: a restarted worker
    /// [`SpendBudget::restore`]s it, so a crash loop cannot spend a window's allowance again.
    #[must_use]
    pub fn record(&mut self, now: Instant) -> SpentRecord {
        let (elapsed, minute) = self.minute(now);
        let scopes = (self.windows.iter_mut())
            .map(|(scope, windows)| {
                windows.day.expire(elapsed);
                let minutes = (windows.day.buckets.iter())
                    .map(|(at, amount)| SpentMinute {
                        age_minutes: minute.saturating_sub(*at),
                        tokens: amount.tokens,
                        nanos: amount.nanos,
                    })
                    .collect();
                (scope.key(), minutes)
            })
            .filter(|(_, minutes): &(String, Vec<SpentMinute>)| !minutes.is_empty())
            .collect();
        SpentRecord { scopes }
    }

    /// Adds what `record` says was spent, each minute at its age from `now` (a minute older
    /// than this budget's start counts from its start: it errs toward refusing, as the windows
    /// do). A scope the record names that this budget's config no longer has is skipped.
    pub fn restore(&mut self, record: &SpentRecord, now: Instant) {
        let (_, minute) = self.minute(now);
        for (key, minutes) in &record.scopes {
            let Some(scope) = Scope::from_key(key) else {
                continue;
            };
            let windows = self.windows.entry(scope).or_insert_with(|| Windows {
                hour: Window::new(HOUR),
                day: Window::new(DAY),
            });
            let mut spent: Vec<(u64, Amount)> = (minutes.iter())
                .filter(|m| m.age_minutes < DAY.as_secs() / BUCKET.as_secs())
                .map(|m| {
                    let at = minute.saturating_sub(m.age_minutes);
                    (
                        at,
                        Amount {
                            tokens: m.tokens,
                            nanos: m.nanos,
                        },
                    )
                })
                .collect();
            spent.sort_by_key(|(at, _)| *at);
            for (at, amount) in spent {
                for window in windows.both() {
                    window.restore(at, amount);
                }
            }
        }
    }
}

/// One minute of spend in a [`SpentRecord`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpentMinute {
    /// Minutes before the record was taken.
    pub age_minutes: u64,
    /// Tokens spent (prompt and completion).
    pub tokens: u64,
    /// Money spent, in nanos.
    pub nanos: u64,
}

/// What a spend budget's allowances held when it was saved, by scope (`all`, `seam:<seam>`,
/// `class:<class>`, `tier:<tier>`), minute by minute over the last day.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SpentRecord {
    /// Scope key → its minutes, oldest first.
    pub scopes: BTreeMap<String, Vec<SpentMinute>>,
}

impl Scope {
    /// The scope's key in a [`SpentRecord`].
    #[must_use]
    pub fn key(&self) -> String {
        match self {
            Self::All => "all".to_owned(),
            Self::Seam(seam) => format!("seam:{}", seam.as_str()),
            Self::Class(class) => format!("class:{class}"),
            Self::Tier(tier) => format!("tier:{tier}"),
        }
    }

    /// The scope of `key`, if it names one.
    #[must_use]
    pub fn from_key(key: &str) -> Option<Self> {
        match key.split_once(':') {
            None if key == "all" => Some(Self::All),
            Some(("seam", seam)) => Seam::from_wire(seam).map(Self::Seam),
            Some(("class", class)) => Some(Self::Class(class.to_owned())),
            Some(("tier", tier)) => Some(Self::Tier(tier.to_owned())),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(config: BudgetConfig) -> (SpendBudget, Instant) {
        let origin = Instant::now();
        (SpendBudget::from_config(&config, origin), origin)
    }

    fn tokens(tokens: u64) -> Amount {
        Amount { tokens, nanos: 0 }
    }

    #[test]
    fn a_restarted_budget_restores_what_was_spent_and_lets_it_age_out() {
        let config = BudgetConfig {
            tokens_per_hour: Some(100),
            tokens_per_day: Some(150),
            ..BudgetConfig::default()
        };
        let (mut before, start) = budget(config.clone());
        let (tags, w) = (SpendTags::default(), Priority::Witnessed);
        let spent = before
            .reserve(start, Seam::Narration, w, &tags, tokens(90))
            .expect("fits");
        before.settle(spent, tokens(80));
        // Saved half an hour later, as JSON, and restored by a worker that starts then.
        let saved_at = start + HOUR / 2;
        let record = before.record(saved_at);
        let text = serde_json::to_string(&record).expect("json");
        let record: SpentRecord = serde_json::from_str(&text).expect("json");
        assert_eq!(record.scopes["all"][0].age_minutes, 30);
        let (mut after, restart) = budget(config);
        after.restore(&record, restart);
        assert_eq!(after.used(&Scope::All, restart), (tokens(80), tokens(80)));
        assert!(
            after
                .reserve(restart, Seam::Narration, w, &tags, tokens(30))
                .is_err(),
            "the hour's spend survives the restart"
        );
        // Restored spend counts from the restart (it errs toward refusing): an hour and a
        // minute on it has left the hour, not the day.
        let later = restart + HOUR + BUCKET;
        assert_eq!(after.used(&Scope::All, later), (tokens(0), tokens(80)));
        assert!(
            after
                .reserve(later, Seam::Narration, w, &tags, tokens(80))
                .is_err(),
            "the day's"
        );
        assert!(Scope::from_key("seam:narration") == Some(Scope::Seam(Seam::Narration)));
        assert_eq!(Scope::from_key("nonsense"), None);
    }

    #[test]
    fn without_allowances_all_is_counted_and_an_allowance_set_later_counts_it() {
        let (mut budget, now) = budget(BudgetConfig::default());
        let guard = SpendTags {
            class: Some("guard".to_owned()),
            tier: Some("active".to_owned()),
        };
        let r = Priority::Routine;
        let spent = budget
            .reserve(now, Seam::Narration, r, &guard, tokens(1_000_000))
            .expect("nothing limits");
        budget.settle(spent, tokens(900));
        let scopes: Vec<(Scope, Amount)> = (budget.spent(now).into_iter())
            .map(|(scope, hour, _)| (scope, hour))
            .collect();
        assert_eq!(
            scopes,
            [
                (Scope::All, tokens(900)),
                (Scope::Seam(Seam::Narration), tokens(900)),
                (Scope::Class("guard".to_owned()), tokens(900)),
                (Scope::Tier("active".to_owned()), tokens(900)),
            ]
        );
        let stricter = BudgetConfig {
            tokens_per_hour: Some(2000),
            classes: [("guard".to_owned(), 0.5)].into(),
            witnessed_reserve: 0.0,
            ..BudgetConfig::default()
        };
        budget.set_allowances(&stricter).expect("valid");
        assert_eq!(budget.allowances(), &stricter);
        let refused = budget.reserve(now, Seam::Narration, r, &guard, tokens(101));
        assert_eq!(
            refused,
            Err(Refused {
                scope: Scope::Class("guard".to_owned())
            }),
            "the class spent 900 of its 1000 before its share was set"
        );
        let invalid = BudgetConfig {
            witnessed_reserve: 1.5,
            ..stricter.clone()
        };
        let error = budget.set_allowances(&invalid).expect_err("refused");
        assert!(
            error.to_string().contains("budget.witnessed_reserve"),
            "{error}"
        );
        assert_eq!(
            budget.allowances(),
            &stricter,
            "a refused change changes nothing"
        );
    }

    #[test]
    fn reservations_never_pass_the_hour_and_settle_to_what_was_spent() {
        let (mut budget, now) = budget(BudgetConfig {
            tokens_per_hour: Some(100),
            ..BudgetConfig::default()
        });
        let tags = SpendTags::default();
        let w = Priority::Witnessed;
        let first = budget
            .reserve(now, Seam::Perception, w, &tags, tokens(60))
            .expect("fits");
        assert!(
            budget
                .reserve(now, Seam::Perception, w, &tags, tokens(60))
                .is_err()
        );
        budget.settle(first, tokens(30));
        let second = budget
            .reserve(now, Seam::Perception, w, &tags, tokens(60))
            .expect("fits");
        budget.settle(second, tokens(70));
        assert_eq!(budget.used(&Scope::All, now).0, tokens(100));
        assert!(
            budget
                .reserve(now, Seam::Perception, w, &tags, tokens(1))
                .is_err()
        );
        // An hour and a minute later the spend has left the hour window.
        let later = now + HOUR + BUCKET;
        assert_eq!(budget.used(&Scope::All, later).0, tokens(0));
        assert_eq!(
            budget.used(&Scope::All, later).1,
            tokens(100),
            "still in the day"
        );
        assert!(
            budget
                .reserve(later, Seam::Perception, w, &tags, tokens(100))
                .is_ok()
        );
    }

    #[test]
    fn routine_work_leaves_the_reserve_to_witnessed_requests() {
        let (mut budget, now) = budget(BudgetConfig {
            tokens_per_hour: Some(100),
            witnessed_reserve: 0.25,
            ..BudgetConfig::default()
        });
        let tags = SpendTags::default();
        let r = budget.reserve(now, Seam::Narration, Priority::Routine, &tags, tokens(75));
        let _kept = r.expect("fits the unreserved 75");
        let refused = budget.reserve(now, Seam::Narration, Priority::Routine, &tags, tokens(1));
        assert_eq!(refused, Err(Refused { scope: Scope::All }));
        let witnessed =
            budget.reserve(now, Seam::Narration, Priority::Witnessed, &tags, tokens(25));
        assert!(witnessed.is_ok());
    }

    #[test]
    fn a_class_share_refuses_that_class_only() {
        let (mut budget, now) = budget(BudgetConfig {
            money_per_day: Some(1.0),
            classes: [("guard".to_owned(), 0.5)].into(),
            ..BudgetConfig::default()
        });
        let guard = SpendTags {
            class: Some("guard".to_owned()),
            tier: None,
        };
        let smith = SpendTags {
            class: Some("smith".to_owned()),
            tier: None,
        };
        let half = Amount {
            tokens: 0,
            nanos: 500_000_000,
        };
        let w = Priority::Witnessed;
        let _guard = budget
            .reserve(now, Seam::Perception, w, &guard, half)
            .expect("half");
        let again = budget.reserve(
            now,
            Seam::Perception,
            w,
            &guard,
            Amount {
                tokens: 0,
                nanos: 1,
            },
        );
        assert_eq!(
            again,
            Err(Refused {
                scope: Scope::Class("guard".to_owned())
            })
        );
        let _smith = budget
            .reserve(now, Seam::Perception, w, &smith, half)
            .expect("the rest");
    }
}
