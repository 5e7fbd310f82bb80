//! SKELETON: the sqlite backend (implementation lands on branch oltp-sqlite).
