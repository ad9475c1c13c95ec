//! What the readings and the commands of Zigbee2MQTT and MQTT discovery share: numbers as said
//! and as sent, lists as said, and the colours a colour command names.

use serde_json::{Number, Value};

/// A number as said: at most two decimals, none when whole ("21", "19.5", "0.33").
pub(crate) fn number(v: f64) -> String {
    let rounded = (v * 100.0).round() / 100.0;
    if rounded.fract() == 0.0 && rounded.abs() < 1e15 {
        format!("{}", rounded as i64)
    } else {
        format!("{rounded}")
    }
}

/// A number as a payload carries it: an integer when whole (`21`, not `21.0`).
pub(crate) fn json_number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9e15 {
        Value::from(v as i64)
    } else {
        Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

/// `v` rounded to the nearest multiple of `step` (no rounding without a positive step), with
/// the float noise of the multiplication taken off.
pub(crate) fn to_step(v: f64, step: Option<f64>) -> f64 {
    match step {
        Some(step) if step > 0.0 => {
            let stepped = (v / step).round() * step;
            (stepped * 1e6).round() / 1e6
        }
        _ => v,
    }
}

/// "a, b and c".
pub(crate) fn all_of(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// "The NAME is on, is clear and reads 21 °C; it is 19.5 degrees now.", from its parts (each
/// starting "is", or the readings), "are" and "read" for a name that ends in "s" (not "ss" or
/// "us": "the blinds are closed", "the status is"); without any, that the thing has not
/// reported its state.
pub(crate) fn sentence(
    name: &str,
    is: Vec<String>,
    reads: Vec<String>,
    now: Option<String>,
) -> String {
    let plural = name.ends_with('s') && !name.ends_with("ss") && !name.ends_with("us");
    let mut is: Vec<String> = is
        .into_iter()
        .map(|clause| match clause.strip_prefix("is ") {
            Some(rest) if plural => format!("are {rest}"),
            _ => clause,
        })
        .collect();
    if !reads.is_empty() {
        let verb = if plural { "read" } else { "reads" };
        is.push(format!("{verb} {}", all_of(&reads)));
    }
    let reads = if plural { "read" } else { "reads" };
    match (is.is_empty(), now) {
        (true, None) => {
            let has = if plural { "have" } else { "has" };
            format!("The {name} {has} not reported its state yet.")
        }
        (true, Some(now)) => format!("The {name} {reads} {now}."),
        (false, Some(now)) => format!("The {name} {}; it is {now} now.", all_of(&is)),
        (false, None) => format!("The {name} {}.", all_of(&is)),
    }
}

/// The colours a [`crate::Command::Color`] may name, with their CSS sRGB values.
const COLORS: [(&str, [u8; 3]); 14] = [
    ("red", [255, 0, 0]),
    ("orange", [255, 165, 0]),
    ("gold", [255, 215, 0]),
    ("yellow", [255, 255, 0]),
    ("lime", [0, 255, 0]),
    ("green", [0, 128, 0]),
    ("turquoise", [64, 224, 208]),
    ("cyan", [0, 255, 255]),
    ("blue", [0, 0, 255]),
    ("purple", [128, 0, 128]),
    ("violet", [238, 130, 238]),
    ("magenta", [255, 0, 255]),
    ("pink", [255, 192, 203]),
    ("white", [255, 255, 255]),
];

/// The sRGB value of a colour by its CSS name, any case; `None` for a name not in [`COLORS`].
pub(crate) fn rgb(name: &str) -> Option<[u8; 3]> {
    let name = name.trim().to_lowercase();
    COLORS.iter().find(|(n, _)| *n == name).map(|(_, rgb)| *rgb)
}

/// The colour names [`rgb`] knows, as an error says what a colour command takes.
pub(crate) fn color_names() -> String {
    let names: Vec<String> = COLORS.iter().map(|(n, _)| (*n).to_owned()).collect();
    format!("one of {}", names.join(", "))
}

/// The CIE 1931 xy chromaticity of an sRGB colour, four decimals, as Home Assistant's
/// `color_RGB_to_xy` computes it (the sRGB gamma, then the wide-gamut D65 matrix).
pub(crate) fn xy(rgb: [u8; 3]) -> (f64, f64) {
    let linear = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c > 0.04045 {
            ((c + 0.055) / 1.055).powf(2.4)
        } else {
            c / 12.92
        }
    };
    let (r, g, b) = (linear(rgb[0]), linear(rgb[1]), linear(rgb[2]));
    let x = r * 0.664_511 + g * 0.154_324 + b * 0.162_028;
    let y = r * 0.283_881 + g * 0.668_433 + b * 0.047_685;
    let z = r * 0.000_088 + g * 0.072_310 + b * 0.986_039;
    let sum = x + y + z;
    if sum == 0.0 {
        return (0.0, 0.0);
    }
    let four = |v: f64| (v * 10_000.0).round() / 10_000.0;
    (four(x / sum), four(y / sum))
}

/// The hue (degrees, 0 to 360) and saturation (percent) of an sRGB colour, one decimal.
pub(crate) fn hs(rgb: [u8; 3]) -> (f64, f64) {
    let [r, g, b] = rgb.map(|c| f64::from(c) / 255.0);
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let delta = max - min;
    let hue = if delta == 0.0 {
        0.0
    } else if max == r {
        60.0 * ((g - b) / delta).rem_euclid(6.0)
    } else if max == g {
        60.0 * ((b - r) / delta + 2.0)
    } else {
        60.0 * ((r - g) / delta + 4.0)
    };
    let saturation = if max == 0.0 { 0.0 } else { delta / max * 100.0 };
    let one = |v: f64| (v * 10.0).round() / 10.0;
    (one(hue), one(saturation))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_said_without_noise() {
        assert_eq!(number(21.0), "21");
        assert_eq!(number(19.5), "19.5");
        assert_eq!(number(21.349), "21.35");
        assert_eq!(number(-3.0), "-3");
        assert_eq!(json_number(21.0), Value::from(21));
        assert_eq!(json_number(21.5).to_string(), "21.5");
        assert_eq!(to_step(21.3, Some(0.5)), 21.5);
        assert_eq!(to_step(20.1, Some(0.1)), 20.1);
        assert_eq!(to_step(21.26, None), 21.26);
    }

    #[test]
    fn colours_convert_as_home_assistant_does() {
        assert_eq!(rgb(" Red "), Some([255, 0, 0]));
        assert_eq!(rgb("chartreuse"), None);
        assert_eq!(xy([255, 0, 0]), (0.7006, 0.2993));
        assert_eq!(xy([0, 0, 255]), (0.1355, 0.0399));
        assert_eq!(xy([0, 0, 0]), (0.0, 0.0));
        assert_eq!(hs([255, 0, 0]), (0.0, 100.0));
        assert_eq!(hs([0, 0, 255]), (240.0, 100.0));
        assert_eq!(hs([255, 165, 0]), (38.8, 100.0));
        assert_eq!(hs([255, 255, 255]), (0.0, 0.0));
        assert_eq!(all_of(&["a".into(), "b".into(), "c".into()]), "a, b and c");
    }
}
