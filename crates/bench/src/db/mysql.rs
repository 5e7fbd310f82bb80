//! SKELETON: the mysql backend (implementation lands on branch oltp-mysql).
