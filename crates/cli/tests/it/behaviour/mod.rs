mod lru_balance;
mod memcg;
mod workingset;
