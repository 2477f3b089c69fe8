mod drop_caches;
mod highatomic;
mod lru_balance;
mod memcg;
mod mglru;
mod sched;
mod workingset;
mod writeback;
