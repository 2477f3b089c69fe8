mod drop_caches;
mod lru_balance;
mod memcg;
mod mglru;
mod sched;
mod workingset;
mod writeback;
