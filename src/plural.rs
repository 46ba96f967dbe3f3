//! Counts in the texts people read: `1 run`, `2 runs`, never `1 runs`.

/// `n` and `noun`, plural unless `n` is 1.
pub fn counted(n: u64, noun: &str) -> String {
    format!("{n} {}", noun_for(n, noun))
}

/// `noun` as it reads after the count `n`: plural (an `s` added) unless `n` is 1.
pub fn noun_for(n: u64, noun: &str) -> String {
    match n {
        1 => noun.to_owned(),
        _ => format!("{noun}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_of_one_is_singular() {
        assert_eq!(counted(1, "run"), "1 run");
        assert_eq!(counted(0, "run"), "0 runs");
        assert_eq!(counted(2, "problem"), "2 problems");
        assert_eq!(noun_for(1, "problem"), "problem");
        assert_eq!(noun_for(7, "problem"), "problems");
    }
}
