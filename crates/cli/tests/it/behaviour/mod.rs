mod lru_balance;
mod memcg;
mod mglru;
mod workingset;
mod writeback;
