//! The declaration both kinds of server switch share: a fault ([`super::Fault`]) and a
//! spec-open variant ([`super::Variant`]) are each an enum of named switches, listed in
//! declaration order, found by their kebab-case names, and held in a set that tests one
//! with a shift and an AND, so the correct path pays nothing for the machinery.

/// Declares an enum of switches, each with its kebab-case name and doc line, with `ALL`,
/// `name` and `from_name`, and `$set`, a set of them as a bitset; `$flag` is the
/// command-line flag that takes a name. Fewer than 256 switches fit a set: each kind's
/// unit test keeps it that way.
macro_rules! switches {
    (
        $(#[$meta:meta])*
        pub enum $enum:ident ($flag:literal) in $set:ident {
            $($variant:ident => $name:literal, $doc:expr;)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $enum {
            $(
                #[doc = $doc]
                $variant,
            )+
        }

        impl $enum {
            /// Every one, in declaration order.
            pub const ALL: &'static [$enum] = &[$($enum::$variant),+];

            #[doc = concat!("The kebab-case name used by `", $flag, " NAME`.")]
            pub fn name(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)+
                }
            }

            /// The one with this kebab-case name, if any.
            pub fn from_name(name: &str) -> Option<$enum> {
                $enum::ALL.iter().copied().find(|switch| switch.name() == name)
            }

            /// The word of the set it sits in, and its bit there.
            fn bit(self) -> (usize, u128) {
                let index = self as u32;
                ((index / 128) as usize, 1u128 << (index % 128))
            }
        }

        #[doc = concat!("A set of [`", stringify!($enum), "`]s as a bitset.")]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub(crate) struct $set([u128; 2]);

        impl $set {
            pub(crate) fn new(switches: &[$enum]) -> $set {
                let mut words = [0u128; 2];
                for switch in switches {
                    let (word, bit) = switch.bit();
                    words[word] |= bit;
                }
                $set(words)
            }

            pub(crate) fn has(self, switch: $enum) -> bool {
                let (word, bit) = switch.bit();
                self.0[word] & bit != 0
            }
        }
    };
}
