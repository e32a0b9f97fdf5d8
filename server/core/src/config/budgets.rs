//! The budgets the settings and the environment set, over the defaults.

use std::time::Duration;

use super::settings::Settings;
use crate::budget::Budgets;

/// A number that is not one: which setting, and what it held.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BadNumber {
    pub(crate) name: &'static str,
    pub(crate) value: String,
}

/// `max_minutes` (fractions allowed: `0.1` is 6 s) as a duration.
pub(crate) fn minutes_to_duration(minutes: f64) -> Result<Duration, BadNumber> {
    Duration::try_from_secs_f64(minutes * 60.0).map_err(|_| BadNumber {
        name: "max_minutes",
        value: minutes.to_string(),
    })
}

/// The budgets `layers` (highest first) and the environment set, over the
/// defaults.
pub(crate) fn budgets(
    layers: &[&Settings],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Budgets, BadNumber> {
    let mut budgets = Budgets::default();
    let env_number = |name: &'static str| -> Result<Option<f64>, BadNumber> {
        match env(name).filter(|v| !v.trim().is_empty()) {
            Some(v) => v
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| BadNumber { name, value: v }),
            None => Ok(None),
        }
    };
    if let Some(n) = layers.iter().find_map(|l| l.max_turns) {
        budgets.max_turns = n;
    } else if let Some(n) = env_number("REIN_MAX_TURNS")? {
        budgets.max_turns = n as u32;
    }
    if let Some(usd) = layers.iter().find_map(|l| l.max_cost_usd) {
        budgets.max_cost_usd = Some(usd);
    } else if let Some(usd) = env_number("REIN_MAX_COST_USD")? {
        budgets.max_cost_usd = Some(usd);
    }
    if let Some(minutes) = layers.iter().find_map(|l| l.max_minutes) {
        budgets.max_wall_time = minutes_to_duration(minutes)?;
    }
    if let Some(tokens) = layers.iter().find_map(|l| l.max_tokens) {
        budgets.max_tokens = tokens;
    }
    Ok(budgets)
}
