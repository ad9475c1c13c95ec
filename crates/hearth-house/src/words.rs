//! Friendly names as people say them: `living_room/Ceiling Light` is a "ceiling light" in the
//! "living room".

/// The name and room a friendly name says: the last `/` segment is the name, the one before
/// it the room (`home/kitchen/Wall Switch`: "wall switch" in "kitchen"). `None` when no
/// segment has a word.
pub(crate) fn name_and_room(friendly_name: &str) -> Option<(String, Option<String>)> {
    let mut segments = friendly_name
        .split('/')
        .map(words)
        .filter(|w| !w.is_empty())
        .rev();
    let name = segments.next()?;
    Some((name, segments.next()))
}

/// Whether a friendly name is only an address: Zigbee2MQTT names a device by its IEEE address
/// (`0x00158d0001e8a2b3`) and a group by its id (`5`) until someone renames it.
pub(crate) fn is_address(friendly_name: &str) -> bool {
    let hex = friendly_name
        .strip_prefix("0x")
        .is_some_and(|h| h.len() == 16 && h.chars().all(|c| c.is_ascii_hexdigit()));
    hex || (!friendly_name.is_empty() && friendly_name.chars().all(|c| c.is_ascii_digit()))
}

/// A segment's words: lower case, split at `_`, `-`, `.`, spaces and a lower-case letter
/// followed by an upper-case one (`FloorLamp`), other punctuation dropped (an apostrophe
/// kept: "kid's room").
pub(crate) fn words(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    let mut gap = false;
    let mut previous_lower = false;
    for c in segment.chars() {
        if c.is_alphanumeric() || c == '\'' {
            if (gap || (previous_lower && c.is_uppercase())) && !out.is_empty() {
                out.push(' ');
            }
            gap = false;
            previous_lower = c.is_lowercase();
            out.extend(c.to_lowercase());
        } else {
            gap = true;
            previous_lower = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_becomes_its_words() {
        assert_eq!(words("Kitchen Bulb"), "kitchen bulb");
        assert_eq!(words("living_room"), "living room");
        assert_eq!(words("FloorLamp"), "floor lamp");
        assert_eq!(words("  Kid's-Room. "), "kid's room");
        assert_eq!(words("LED strip 2"), "led strip 2");
        assert_eq!(words("Küche"), "küche");
        assert_eq!(words("__"), "");
    }

    #[test]
    fn the_room_is_the_segment_before_the_name() {
        let pair = |n: &str, r: Option<&str>| Some((n.to_owned(), r.map(str::to_owned)));
        assert_eq!(name_and_room("Front Door"), pair("front door", None));
        assert_eq!(
            name_and_room("living_room/Ceiling Light"),
            pair("ceiling light", Some("living room"))
        );
        assert_eq!(
            name_and_room("home/kitchen/Wall Switch"),
            pair("wall switch", Some("kitchen"))
        );
        assert_eq!(
            name_and_room("kitchen//lamp/"),
            pair("lamp", Some("kitchen"))
        );
        assert_eq!(name_and_room("/-/"), None);
    }

    #[test]
    fn addresses_are_no_names() {
        assert!(is_address("0x00158d0001e8a2b3"));
        assert!(is_address("12"));
        assert!(!is_address("0x00158d0001e8a2b3 lamp"));
        assert!(!is_address("Lamp 12"));
        assert!(!is_address(""));
    }
}
