//! Roost's integration tests: one binary, one module per area.

mod actors_virtual;
mod classad_cli;
mod classad_limits;
mod classad_oracle;
mod classad_props;
mod config_cli;
mod config_oracle;
mod config_props;
mod daemon;
mod daemon_admin;
mod daemon_backfill;
mod daemon_cgroup;
mod daemon_restart;
mod daemon_spares;
mod events_cli;
mod events_crash;
mod events_faults;
mod events_golden;
mod events_store;
mod policy_engine;
mod policy_props;
mod policy_publish;
mod policy_simulate;
mod starter_owner;
mod tidy;
mod userlog;
