//! A uniform grid over providers for batch decisions, so an agent only visits providers whose
//! advertisement radius could reach it. It narrows the search; it never changes a result:
//! candidates come back in provider input order, and everything it skips would have failed the
//! radius or provider-slot gate anyway.

use std::collections::HashMap;

use crate::world::{Position, World};

pub(crate) struct ProviderGrid {
    cell_size: f64,
    reach: f64,
    cells: HashMap<(i64, i64), Vec<u32>>,
    unbounded: Vec<u32>,
}

fn cell_of(coordinate: f64, cell_size: f64) -> i64 {
    // `as` saturates, so absurd coordinates land in the edge cells instead of wrapping.
    (coordinate / cell_size).floor() as i64
}

impl ProviderGrid {
    pub(crate) fn new(world: &World) -> Self {
        let mut bounded = Vec::new();
        let mut unbounded = Vec::new();
        let mut reach: f64 = 0.0;
        for (index, provider) in world.providers.iter().enumerate() {
            if provider.free_slots() == 0 || provider.actions.is_empty() {
                continue;
            }
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            let radii: Option<Vec<f64>> = provider.actions.iter().map(|a| a.radius).collect();
            match radii {
                Some(radii) => {
                    reach = radii.into_iter().fold(reach, f64::max);
                    bounded.push((index, provider.position));
                }
                None => unbounded.push(index),
            }
        }
        let cell_size = if reach > 0.0 && reach.is_finite() {
            reach
        } else {
            1.0
        };
        let mut cells: HashMap<(i64, i64), Vec<u32>> = HashMap::new();
        for (index, position) in bounded {
            let key = (
                cell_of(position.x, cell_size),
                cell_of(position.y, cell_size),
            );
            cells.entry(key).or_default().push(index);
        }
        Self {
            cell_size,
            reach,
            cells,
            unbounded,
        }
    }

    /// Fills `out` with the indices of providers that may be in reach of `position`, ascending.
    pub(crate) fn near(&self, position: &Position, out: &mut Vec<u32>) {
        out.clear();
        out.extend_from_slice(&self.unbounded);
        let (x0, x1) = (
            cell_of(position.x - self.reach, self.cell_size),
            cell_of(position.x + self.reach, self.cell_size),
        );
        let (y0, y1) = (
            cell_of(position.y - self.reach, self.cell_size),
            cell_of(position.y + self.reach, self.cell_size),
        );
        if x1.saturating_sub(x0).saturating_mul(y1.saturating_sub(y0)) > self.cells.len() as i64 {
            // Reach spans more cells than are occupied: walk the occupied ones instead.
            for ((cx, cy), indices) in &self.cells {
                if (x0..=x1).contains(cx) && (y0..=y1).contains(cy) {
                    out.extend_from_slice(indices);
                }
            }
        } else {
            for cx in x0..=x1 {
                for cy in y0..=y1 {
                    if let Some(indices) = self.cells.get(&(cx, cy)) {
                        out.extend_from_slice(indices);
                    }
                }
            }
        }
        out.sort_unstable();
    }
}
