GlobalJobId = "submit.example.org#101.0#1700000000"
Owner = "alice"
RequestCpus = 2
RequestMemory = 4096
RequestDisk = 1048576
JobPrio = 0
Requirements = (TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && TARGET.HasFileTransfer
Rank = TARGET.Memory + TARGET.KFlops / 1000

GlobalJobId = "submit.example.org#102.0#1700000000"
Owner = "bob"
RequestCpus = 1
RequestMemory = 65536
RequestDisk = 1048576
RequestGPUs = 1
JobPrio = 0
Requirements = (TARGET.GPUs ?: 0) >= RequestGPUs && TARGET.HasDocker
Rank = TARGET.GPUs

GlobalJobId = "submit.example.org#103.0#1700000000"
Owner = "carol"
RequestCpus = 64
RequestMemory = 1024
RequestDisk = 1024
JobPrio = 5
Requirements = TARGET.Cpus >= RequestCpus
Rank = 0
