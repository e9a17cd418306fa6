// Package hostdrv puts a host's RoCE NICs into the state the intent implies,
// natively from Go: DCBX mode, DSCP trust (APP table), PFC, ETS, global pause,
// MTU, RDMA-CM default ToS and RoCE mode, the ECN/CNP controls and the DCQCN
// parameters of policy.dcqcn (mlx5 debugfs cc_params or MLNX_OFED sysfs,
// bnxt_re configfs cc); ConnectX's ROCE_ACCL accelerations, which no kernel
// interface reaches, are a manual step in the plan.
//
// The pieces:
//   - Backend (generic dcbnl, mlx5) is pure: it turns the policy and one NIC
//     into the desired NIC state plus notes for what the OS cannot change
//     (firmware settings). Driver differences are data (Quirks).
//   - Kernel is rtnetlink (dcbnl requests from internal/dcbnl, MTU) and the
//     ethtool ioctl; the Linux one takes a network namespace handle.
//   - Files is sysfs / configfs / debugfs under one root directory, so tests
//     run against a prepared tree that looks like an mlx5 host.
//   - Driver observes, plans (plan.TargetPlan, Kind "host", paths like
//     "ens1f0np0/pfc"), applies the plan's steps and reads back. Nothing is
//     written when a setting already has its value: on mlx5 rewriting PFC
//     flaps the link. Steps run per interface in stepOrder (pause off before
//     PFC and buffers, DSCP trust last); a plan with errors writes nothing
//     unless partial; every step's outcome is returned (ApplyResult).
//   - Backup / Restore: the observation is saved before the first write and
//     put back (verified by reading back) on a failed step or on request.
//   - Assume plans against an assumed state (driver defaults, a backup)
//     where there is no NIC.
//   - Fleet runs `fabricctl host apply` on the inventory's remote hosts over
//     an internal/remote Runner.
package hostdrv
