//! SKELETON: the postgres backend (implementation lands on branch oltp-postgres).
