//! Unit tests of the open points: each passage is found in SPEC.md, ids and variant names
//! are unique, and each point names two different edges.

use super::{OPEN_POINTS, REFERENCE};

fn normalized(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_passage_is_found_in_spec_md() {
    let spec = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../cases/SPEC.md"))
        .expect("cases/SPEC.md");
    let spec = normalized(&spec);
    for point in OPEN_POINTS {
        assert!(
            spec.contains(&normalized(point.passage)),
            "{}: passage not in SPEC.md: {}",
            point.id,
            point.passage
        );
    }
}

#[test]
fn each_point_has_two_edges_among_its_choices() {
    for point in OPEN_POINTS {
        let known = |name: &str| {
            name == REFERENCE || point.alternatives.iter().any(|(other, _)| *other == name)
        };
        assert!(known(point.narrowest), "{}: {}", point.id, point.narrowest);
        assert!(known(point.widest), "{}: {}", point.id, point.widest);
        assert_ne!(point.narrowest, point.widest, "{}", point.id);
    }
}

#[test]
fn ids_and_variant_names_are_unique() {
    let mut ids: Vec<&str> = OPEN_POINTS.iter().map(|point| point.id).collect();
    let mut names: Vec<&str> = OPEN_POINTS
        .iter()
        .flat_map(|point| point.alternatives.iter().map(|(name, _)| *name))
        .collect();
    let (id_count, name_count) = (ids.len(), names.len());
    ids.sort_unstable();
    ids.dedup();
    names.sort_unstable();
    names.dedup();
    assert_eq!(ids.len(), id_count);
    assert_eq!(names.len(), name_count);
    assert!(name_count >= 20, "{name_count} variants");
}
