Name = "slot1@node01.example.org"
Machine = "node01.example.org"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 8
Memory = 32768
Disk = 104857600
KFlops = 2500000
LoadAvg = 0.05
CondorLoadAvg = 0.0
KeyboardIdle = 3600
HasFileTransfer = true
HasDocker = true
START = (KeyboardIdle > 15 * 60) && (LoadAvg - CondorLoadAvg <= 0.3) && (TARGET.RequestMemory <= Memory) && (TARGET.RequestCpus <= Cpus)
Requirements = START
Rank = TARGET.Owner == "alice" ? 10 : 0

Name = "slot1@node02.example.org"
Machine = "node02.example.org"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 4
Memory = 8192
Disk = 52428800
KFlops = 1800000
LoadAvg = 0.9
CondorLoadAvg = 0.0
KeyboardIdle = 60
HasFileTransfer = true
HasDocker = false
START = (KeyboardIdle > 15 * 60) && (LoadAvg - CondorLoadAvg <= 0.3) && (TARGET.RequestMemory <= Memory)
Requirements = START
Rank = 0

Name = "slot1@gpu01.example.org"
Machine = "gpu01.example.org"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 32
Memory = 262144
Disk = 1048576000
KFlops = 3200000
LoadAvg = 0.0
CondorLoadAvg = 0.0
KeyboardIdle = 86400
HasFileTransfer = true
HasDocker = true
GPUs = 4
START = (TARGET.RequestGPUs ?: 0) > 0 || (TARGET.JobPrio >= 10)
Requirements = START
Rank = TARGET.RequestGPUs ?: 0
