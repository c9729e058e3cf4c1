//! Sequences, sampling and the generation loop, generic over a `Backend`.
