//! Reading a large request without building it whole. A request is read twice from its text:
//! the check pass deserializes every part as the contract's types (so a bad value is refused
//! with its JSON path, exactly as when the request is built) but keeps of its large arrays —
//! the agents, the providers — only how many there were ([`Counted`]); the build pass holds
//! those arrays as raw text ([`RawValue`]) and hands their elements over one at a time
//! ([`Elements`]), each compiled and dropped before the next is read. So a request never
//! exists as specs and as engine values at once.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, Error as _, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::request::{AgentSpec, ProviderSpec};
use super::{WireError, plain_words};

/// What a count limit counts inside one element of a counted array (a provider's actions).
pub trait Nested {
    /// How many counted items this element holds.
    fn nested(&self) -> usize;
}

impl Nested for ProviderSpec {
    fn nested(&self) -> usize {
        self.actions.len()
    }
}

impl Nested for AgentSpec {
    fn nested(&self) -> usize {
        0
    }
}

/// An array read only to be checked: every element is deserialized as a `T` and dropped;
/// what is kept is how many elements there were and how many items they held ([`Nested`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counted<T> {
    /// Elements in the array.
    pub len: usize,
    /// Items held by all of them together.
    pub nested: usize,
    element: PhantomData<fn() -> T>,
}

impl<'de, T: Deserialize<'de> + Nested> Deserialize<'de> for Counted<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Counting<T>(PhantomData<fn() -> T>);

        impl<'de, T: Deserialize<'de> + Nested> Visitor<'de> for Counting<T> {
            type Value = Counted<T>;

            // The words of an array that is built (`Vec`), so refusals read the same.
            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a sequence")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Counted<T>, A::Error> {
                let mut counted = Counted {
                    len: 0,
                    nested: 0,
                    element: PhantomData,
                };
                while let Some(element) = seq.next_element::<T>()? {
                    counted.len += 1;
                    counted.nested += element.nested();
                }
                Ok(counted)
            }
        }

        deserializer.deserialize_seq(Counting(PhantomData))
    }
}

/// The elements of a request's array in order: an array already built, or the raw text of
/// one, whose elements are deserialized one at a time, each dropped once `take` returns.
pub trait Elements<T> {
    /// Hands every element with its index to `take`, stopping at its first error. `path` is
    /// the array's JSON path, for an element that cannot be read.
    fn each(
        &self,
        path: &str,
        take: impl FnMut(usize, &T) -> Result<(), WireError>,
    ) -> Result<(), WireError>;
}

impl<T> Elements<T> for Vec<T> {
    fn each(
        &self,
        _path: &str,
        mut take: impl FnMut(usize, &T) -> Result<(), WireError>,
    ) -> Result<(), WireError> {
        self.iter()
            .enumerate()
            .try_for_each(|(index, element)| take(index, element))
    }
}

impl<T: DeserializeOwned> Elements<T> for &RawValue {
    fn each(
        &self,
        path: &str,
        mut take: impl FnMut(usize, &T) -> Result<(), WireError>,
    ) -> Result<(), WireError> {
        let mut refused = None;
        let visitor = Handing {
            take: &mut take,
            refused: &mut refused,
            element: PhantomData,
        };
        let read = serde_json::Deserializer::from_str(self.get()).deserialize_seq(visitor);
        match refused {
            Some(error) => Err(error),
            None => read.map_err(|e| WireError::at(path, plain_words(e.to_string()))),
        }
    }
}

/// Deserializes an array's elements one at a time into `take`; an error of `take` is kept in
/// `refused` and stops the reading.
struct Handing<'a, T, F> {
    take: &'a mut F,
    refused: &'a mut Option<WireError>,
    element: PhantomData<fn() -> T>,
}

impl<'de, T, F> Visitor<'de> for Handing<'_, T, F>
where
    T: Deserialize<'de>,
    F: FnMut(usize, &T) -> Result<(), WireError>,
{
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while let Some(element) = seq.next_element::<T>()? {
            if let Err(error) = (self.take)(index, &element) {
                *self.refused = Some(error);
                return Err(A::Error::custom("refused"));
            }
            index += 1;
        }
        Ok(())
    }
}

/// The build pass's parse of a text the check pass accepted; a failure cannot happen, and is
/// refused like a parse error if it does.
pub fn again<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, WireError> {
    serde_json::from_str(text).map_err(|e| WireError::at(".", plain_words(e.to_string())))
}
