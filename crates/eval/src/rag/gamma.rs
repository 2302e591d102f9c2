//! UDCG's distractor weight γ as an exact rational, so that a measure name such as
//! `UDCG(gamma=0.333)@5` or `UDCG(gamma=1/3)@5` is a hashable, comparable value that prints back
//! to a name parsing to the same measure, and so that the paper's γ = 1/3 and the reference
//! pipeline's 0.333 stay distinct (their scores differ by ~4e-5, REFERENCE §3).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// γ = num/den in lowest terms, 0 ≤ γ ≤ 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Gamma {
    num: u32,
    den: u32,
}

impl Gamma {
    /// The paper's default, γ = 1/3 (Trappolini et al. 2025, §5).
    pub const PAPER: Gamma = Gamma { num: 1, den: 3 };
    /// The reference pipeline's `--irrelevant_weight -0.333`.
    pub const REFERENCE: Gamma = Gamma {
        num: 333,
        den: 1000,
    };
    pub const ZERO: Gamma = Gamma { num: 0, den: 1 };

    /// `num/den` reduced; `None` when `den` is 0 or the value is above 1.
    pub fn new(num: u32, den: u32) -> Option<Gamma> {
        if den == 0 || num > den {
            return None;
        }
        let g = gcd(num, den);
        Some(Gamma {
            num: num / g,
            den: den / g,
        })
    }

    /// The weight as a float: one correctly rounded division, so `0.333` gives exactly the
    /// double that the literal `0.333` gives (what the reference code multiplies by).
    pub fn value(self) -> f64 {
        f64::from(self.num) / f64::from(self.den)
    }
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

/// Why a γ text was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GammaError(pub String);

impl fmt::Display for GammaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "gamma {:?} must be a decimal (at most 9 digits after the point) or a fraction a/b, \
             between 0 and 1",
            self.0
        )
    }
}

impl std::error::Error for GammaError {}

impl FromStr for Gamma {
    type Err = GammaError;

    /// Accepts `0`, `1`, `0.333`, `.5`, `1/3`; no exponents, signs or spaces inside.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || GammaError(text.to_string());
        let digits =
            |s: &str| !s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit());
        let t = text.trim();
        if let Some((a, b)) = t.split_once('/') {
            if !digits(a) || !digits(b) {
                return Err(bad());
            }
            let (a, b) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
            return Gamma::new(a, b).ok_or_else(bad);
        }
        let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
        if (whole.is_empty() && frac.is_empty())
            || !(whole.is_empty() || digits(whole))
            || !(frac.is_empty() || digits(frac))
        {
            return Err(bad());
        }
        let whole: u32 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| bad())?
        };
        if whole > 1 {
            return Err(bad());
        }
        let frac = frac.trim_end_matches('0');
        let den = 10u32.pow(frac.len() as u32);
        let part: u32 = if frac.is_empty() {
            0
        } else {
            frac.parse().map_err(|_| bad())?
        };
        Gamma::new(whole * den + part, den).ok_or_else(bad)
    }
}

impl fmt::Display for Gamma {
    /// A decimal when the fraction has one of at most 9 places (denominator 2^a·5^b), else
    /// `num/den`, so that the text always parses back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.den;
        let (mut twos, mut fives) = (0u32, 0u32);
        while rest.is_multiple_of(2) {
            rest /= 2;
            twos += 1;
        }
        while rest.is_multiple_of(5) {
            rest /= 5;
            fives += 1;
        }
        let places = twos.max(fives);
        // The parser reads at most 9 decimals (and 10^places must fit in u64 below).
        if rest != 1 || places > 9 {
            return write!(f, "{}/{}", self.num, self.den);
        }
        if places == 0 {
            return write!(f, "{}", self.num);
        }
        // num/den = num·(10^places/den) / 10^places, exact in u64 (den ≤ 2^32).
        let scaled = u64::from(self.num) * (10u64.pow(places) / u64::from(self.den));
        let scale = 10u64.pow(places);
        write!(
            f,
            "{}.{:0width$}",
            scaled / scale,
            scaled % scale,
            width = places as usize
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_and_fractions() {
        for (text, shown, value) in [
            ("0.333", "0.333", 0.333),
            ("1/3", "1/3", 1.0 / 3.0),
            ("0", "0", 0.0),
            ("1", "1", 1.0),
            ("1.0", "1", 1.0),
            (".5", "0.5", 0.5),
            ("2/4", "0.5", 0.5),
            ("0.250", "0.25", 0.25),
            ("3/16", "0.1875", 0.1875),
            ("0.000000001", "0.000000001", 1e-9),
        ] {
            let g: Gamma = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(g.to_string(), shown, "{text}");
            assert_eq!(g.value(), value, "{text}");
            assert_eq!(shown.parse::<Gamma>(), Ok(g), "{text}");
        }
        assert_eq!("0.333".parse::<Gamma>().map(Gamma::value), Ok(0.333));
        for bad in [
            "",
            ".",
            "1.5",
            "2",
            "-0.1",
            "1e-3",
            "4/3",
            "1/0",
            "0.1234567891",
            "x",
            "1/",
            "NaN",
        ] {
            assert!(bad.parse::<Gamma>().is_err(), "{bad}");
        }
    }
}
