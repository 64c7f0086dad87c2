//! A uniform grid over providers for batch decisions, so an agent only visits providers whose
//! advertisement radius could reach it. It narrows the search; it never changes a result:
//! everything it skips would have failed the radius or provider-slot gate anyway, and the
//! providers come back in cell order, which the order of record does not depend on (it breaks
//! ties by place, see [`crate::decision::order`]).
//!
//! The grid is dense (one flat array of cells over the providers' bounding box, stored as
//! offsets into one index list) with cells a fraction of the longest radius wide, so the cells an
//! agent scans cover little more than the disc in reach; when the box would need too many
//! cells, the cells grow until it does not. The distances it measures to filter are handed on
//! with the indices, so scoring does not measure them again.

use crate::decision::world::{Position, World};

/// At most this many cells per indexed provider (plus a small floor), so memory stays linear.
const MAX_CELLS_PER_PROVIDER: usize = 4;
/// How many cells the longest radius spans: an agent scans a square of `2 × CELLS_PER_REACH + 1`
/// cells a side, whose area shrinks towards that of the reach's square as cells narrow, while
/// the rows it visits (one range each) grow.
const CELLS_PER_REACH: f64 = 2.0;
const MIN_CELL_BUDGET: usize = 64;

#[derive(Clone, Debug)]
pub(crate) struct ProviderGrid {
    origin_x: f64,
    origin_y: f64,
    cell_size: f64,
    columns: usize,
    rows: usize,
    reach: f64,
    /// `cell_starts[c]..cell_starts[c + 1]` indexes `members` for cell `c`.
    cell_starts: Vec<usize>,
    members: Vec<Member>,
    unbounded: Vec<Member>,
}

/// A provider in a cell: where it is and how far its longest radius reaches.
#[derive(Clone, Copy, Debug)]
struct Member {
    index: u32,
    position: Position,
    reach: f64,
}

impl ProviderGrid {
    /// A grid of the providers with a free slot now (valid while no slot frees up): the
    /// agents-apart tick's offers.
    #[cfg(any(test, feature = "apart"))]
    pub(crate) fn new(world: &World) -> Self {
        Self::build(world, true)
    }

    /// A grid of every provider with actions, full or not (valid while occupancy changes).
    pub(crate) fn of_all(world: &World) -> Self {
        Self::build(world, false)
    }

    fn build(world: &World, only_free: bool) -> Self {
        let mut bounded: Vec<Member> = Vec::new();
        let mut unbounded = Vec::new();
        let mut reach: f64 = 0.0;
        for (index, provider) in world.providers.iter().enumerate() {
            if (only_free && provider.free_slots() == 0) || provider.actions.is_empty() {
                continue;
            }
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            let radii: Option<Vec<f64>> = provider.actions.iter().map(|a| a.radius).collect();
            match radii {
                Some(radii) => {
                    let longest = radii.into_iter().fold(0.0, f64::max);
                    reach = reach.max(longest);
                    bounded.push(Member {
                        index,
                        position: provider.position,
                        reach: longest,
                    });
                }
                None => unbounded.push(Member {
                    index,
                    position: provider.position,
                    reach: f64::INFINITY,
                }),
            }
        }
        let (mut origin_x, mut origin_y) = (f64::INFINITY, f64::INFINITY);
        let (mut far_x, mut far_y) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for Member { position: p, .. } in &bounded {
            origin_x = origin_x.min(p.x);
            origin_y = origin_y.min(p.y);
            far_x = far_x.max(p.x);
            far_y = far_y.max(p.y);
        }
        if bounded.is_empty() {
            (origin_x, origin_y, far_x, far_y) = (0.0, 0.0, 0.0, 0.0);
        }
        let budget = MIN_CELL_BUDGET + MAX_CELLS_PER_PROVIDER * bounded.len();
        let mut cell_size = if reach > 0.0 && reach.is_finite() {
            reach / CELLS_PER_REACH
        } else {
            1.0
        };
        let span = |extent: f64, cell_size: f64| (extent / cell_size).floor().min(1e9) as usize + 1;
        let (mut columns, mut rows) = (
            span(far_x - origin_x, cell_size),
            span(far_y - origin_y, cell_size),
        );
        while columns.saturating_mul(rows) > budget {
            cell_size *= 2.0;
            (columns, rows) = (
                span(far_x - origin_x, cell_size),
                span(far_y - origin_y, cell_size),
            );
        }
        let mut grid = Self {
            origin_x,
            origin_y,
            cell_size,
            columns,
            rows,
            reach,
            cell_starts: Vec::new(),
            members: Vec::with_capacity(bounded.len()),
            unbounded,
        };
        // Counting sort by cell keeps each cell's members in provider order.
        let cells: Vec<usize> = bounded
            .iter()
            .map(|m| grid.cell_index(m.position.x, m.position.y))
            .collect();
        let mut counts = vec![0usize; columns * rows + 1];
        for &cell in &cells {
            counts[cell + 1] += 1;
        }
        for c in 1..counts.len() {
            counts[c] += counts[c - 1];
        }
        grid.cell_starts = counts.clone();
        grid.members = bounded.clone();
        for (member, &cell) in bounded.iter().zip(&cells) {
            grid.members[counts[cell]] = *member;
            counts[cell] += 1;
        }
        grid
    }

    fn column_of(&self, x: f64) -> usize {
        cell_of((x - self.origin_x) / self.cell_size).min(self.columns - 1)
    }

    fn row_of(&self, y: f64) -> usize {
        cell_of((y - self.origin_y) / self.cell_size).min(self.rows - 1)
    }

    fn cell_index(&self, x: f64, y: f64) -> usize {
        self.row_of(y) * self.columns + self.column_of(x)
    }

    /// Fills `out` with the indices of providers that may be in reach of `position` (every
    /// provider with an unlimited radius, and those whose longest radius reaches it), each
    /// once, with its distance from `position`.
    pub(crate) fn near(&self, position: &Position, out: &mut Vec<(u32, f64)>) {
        out.clear();
        out.extend(
            self.unbounded
                .iter()
                .map(|m| (m.index, position.distance_to(&m.position))),
        );
        if !self.members.is_empty() {
            let (c0, c1) = (
                self.column_of(position.x - self.reach),
                self.column_of(position.x + self.reach),
            );
            let (r0, r1) = (
                self.row_of(position.y - self.reach),
                self.row_of(position.y + self.reach),
            );
            for row in r0..=r1 {
                let first = self.cell_starts[row * self.columns + c0];
                let last = self.cell_starts[row * self.columns + c1 + 1];
                for member in &self.members[first..last] {
                    let distance = position.distance_to(&member.position);
                    if distance <= member.reach {
                        out.push((member.index, distance));
                    }
                }
            }
        }
    }
}

/// The cell a coordinate in cell widths falls in: its floor, 0 below the grid (or for NaN).
/// A float-to-integer cast already rounds towards zero and saturates negatives and NaN to 0, so
/// it is the floor wherever the result is kept, without the call `floor` is on baseline x86-64.
fn cell_of(cells: f64) -> usize {
    cells as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::world::{AdvertisedAction, Provider};

    fn provider(x: f64, y: f64, radius: Option<f64>) -> Provider {
        let mut action = AdvertisedAction::new("a");
        action.radius = radius;
        Provider {
            id: format!("{x},{y}"),
            position: Position::new(x, y),
            capacity: 1,
            occupants: 0,
            state: None,
            actions: vec![action],
        }
    }

    #[test]
    fn a_cell_is_the_floor_clamped_at_zero() {
        for cells in [
            -3.5f64, -1.0, -0.25, -0.0, 0.0, 0.75, 1.0, 2.999, 7.0, 1e300,
        ] {
            let floored = cells.floor().max(0.0) as usize;
            assert_eq!(cell_of(cells), floored, "{cells}");
        }
        assert_eq!(cell_of(f64::NAN), 0);
        assert_eq!(cell_of(f64::INFINITY), usize::MAX);
        assert_eq!(cell_of(f64::NEG_INFINITY), 0);
    }

    #[test]
    fn the_grid_finds_every_provider_in_reach_once_with_its_distance() {
        let mut providers = Vec::new();
        for i in 0..400 {
            let (x, y) = ((i * 37 % 200) as f64 - 100.0, (i * 53 % 190) as f64 - 95.0);
            providers.push(provider(x, y, Some(5.0 + (i % 7) as f64)));
        }
        providers.push(provider(1000.0, 1000.0, None));
        let world = World {
            now_hours: 0.0,
            contexts: Vec::new(),
            providers,
            ..World::default()
        };
        let grid = ProviderGrid::new(&world);
        let mut near = Vec::new();
        for (x, y) in [
            (0.0, 0.0),
            (-100.0, -95.0),
            (99.0, 94.0),
            (-300.0, 12.0),
            (37.5, -3.25),
        ] {
            let here = Position::new(x, y);
            grid.near(&here, &mut near);
            let mut indices: Vec<u32> = near.iter().map(|&(index, _)| index).collect();
            indices.sort_unstable();
            assert!(indices.windows(2).all(|w| w[0] < w[1]), "no duplicates");
            assert!(
                near.iter().all(|&(index, distance)| distance
                    == here.distance_to(&world.providers[index as usize].position)),
                "distances from the agent"
            );
            for (index, provider) in world.providers.iter().enumerate() {
                let in_reach = provider.actions[0]
                    .radius
                    .is_none_or(|r| here.distance_to(&provider.position) <= r);
                if in_reach {
                    assert!(
                        near.iter().any(|&(near, _)| near == index as u32),
                        "provider {index} missed at ({x}, {y})"
                    );
                }
            }
        }
    }
}
