/**
 * The system-call filter of the code sandbox: a classic-BPF seccomp program that bubblewrap loads
 * (`--seccomp FD`) right before it starts the interpreter process. It is one layer of several (see
 * docs/reliability.md); what it alone guarantees is that the process, whatever code it runs, cannot
 *  - create another process: fork, vfork and clone without CLONE_THREAD fail with EPERM (threads are
 *    still allowed: Node needs them); clone3 fails with ENOSYS so that the C library falls back to
 *    clone, where the flags can be inspected;
 *  - open a network socket: socket() of any family but AF_UNIX fails with EAFNOSUPPORT (the network
 *    namespace has no interface anyway; this also closes netlink and raw packet sockets);
 *  - debug, mount, change namespaces, load kernel code or use kernel interfaces it has no need of
 *    (ptrace, process_vm_*, mount, umount2, pivot_root, chroot, unshare, setns, bpf, perf_event_open,
 *    key management, userfaultfd, io_uring, module and kexec loading): EPERM.
 * A process of another architecture than the one the filter was built for is killed (the system-call
 * numbers would mean something else), as is an x32 call on x86-64.
 *
 * Hand-written because the program is ~60 instructions and the alternative (libseccomp through a
 * Python or native binding) would add a runtime dependency to every user; the test suite checks each
 * rule by running a real process under the filter (test/env/math/sandbox-attacks.test.ts).
 */

const EPERM = 1;
const ENOSYS = 38;
const EAFNOSUPPORT = 97;
const AF_UNIX = 1;
const CLONE_THREAD = 0x10000;

const RET_ALLOW = 0x7fff0000;
const RET_KILL_PROCESS = 0x80000000;
const retErrno = (errno: number) => 0x00050000 | errno;

interface ArchTable {
  /** AUDIT_ARCH_* value the kernel puts in seccomp_data.arch. */
  audit: number;
  /** Calls that create processes, answered EPERM (clone is checked separately). */
  fork: number[];
  clone: number;
  clone3: number;
  socket: number;
  /** Calls with no use in the sandbox, answered EPERM. */
  denied: number[];
}

// Numbers from the kernel's syscall tables (arch/x86/entry/syscalls/syscall_64.tbl and
// include/uapi/asm-generic/unistd.h for arm64), in the order of the comment above.
const ARCHES: Record<string, ArchTable> = {
  x64: {
    audit: 0xc000003e,
    fork: [57, 58],
    clone: 56,
    clone3: 435,
    socket: 41,
    // ptrace, process_vm_readv/writev, mount, umount2, pivot_root, chroot, unshare, setns, bpf,
    // perf_event_open, add_key, request_key, keyctl, userfaultfd, io_uring_setup/enter/register,
    // init_module, finit_module, delete_module, kexec_load, kexec_file_load
    denied: [101, 310, 311, 165, 166, 155, 161, 272, 308, 321, 298, 248, 249, 250, 323, 425, 426, 427, 175, 313, 176, 246, 320],
  },
  arm64: {
    audit: 0xc00000b7,
    fork: [],
    clone: 220,
    clone3: 435,
    socket: 198,
    denied: [117, 270, 271, 40, 39, 41, 51, 97, 268, 280, 241, 217, 218, 219, 282, 425, 426, 427, 105, 273, 106, 104, 294],
  },
};

/** One BPF instruction (struct sock_filter) before encoding; jumps name labels. */
type Op =
  | { ld: number }
  | { jeq: number; then: string; else?: string }
  | { jge: number; then: string }
  | { jset: number; then: string }
  | { ret: number }
  | { label: string };

const SECCOMP_DATA_NR = 0;
const SECCOMP_DATA_ARCH = 4;
const SECCOMP_DATA_ARG0_LOW = 16;

/** The filter for `arch` (process.arch), or undefined when this architecture has no table. */
export function sandboxSeccompFilter(arch: string = process.arch): Buffer | undefined {
  const t = ARCHES[arch];
  if (!t) return undefined;
  const ops: Op[] = [{ ld: SECCOMP_DATA_ARCH }, { jeq: t.audit, then: 'arch_ok', else: 'kill' }, { label: 'arch_ok' }, { ld: SECCOMP_DATA_NR }];
  if (arch === 'x64') ops.push({ jge: 0x40000000, then: 'kill' });
  for (const nr of [...t.fork, ...t.denied]) ops.push({ jeq: nr, then: 'eperm' });
  ops.push({ jeq: t.clone3, then: 'enosys' }, { jeq: t.clone, then: 'clone' }, { jeq: t.socket, then: 'socket' }, { ret: RET_ALLOW });
  ops.push({ label: 'clone' }, { ld: SECCOMP_DATA_ARG0_LOW }, { jset: CLONE_THREAD, then: 'allow' }, { ret: retErrno(EPERM) });
  ops.push({ label: 'socket' }, { ld: SECCOMP_DATA_ARG0_LOW }, { jeq: AF_UNIX, then: 'allow', else: 'eafnosupport' });
  ops.push({ label: 'allow' }, { ret: RET_ALLOW });
  ops.push({ label: 'eperm' }, { ret: retErrno(EPERM) });
  ops.push({ label: 'enosys' }, { ret: retErrno(ENOSYS) });
  ops.push({ label: 'eafnosupport' }, { ret: retErrno(EAFNOSUPPORT) });
  ops.push({ label: 'kill' }, { ret: RET_KILL_PROCESS });
  return assemble(ops);
}

/** Resolves labels to relative jump offsets and encodes struct sock_filter {u16 code; u8 jt, jf; u32 k}. */
function assemble(ops: Op[]): Buffer {
  const at = new Map<string, number>();
  const code: Exclude<Op, { label: string }>[] = [];
  for (const op of ops) {
    if ('label' in op) at.set(op.label, code.length);
    else code.push(op);
  }
  const buf = Buffer.alloc(code.length * 8);
  const jump = (from: number, label: string | undefined): number => {
    if (label === undefined) return 0;
    const to = at.get(label);
    if (to === undefined) throw new Error(`seccomp: unknown label ${label}`);
    const off = to - from - 1;
    if (off < 0 || off > 255) throw new Error(`seccomp: jump to ${label} out of range (${off})`);
    return off;
  };
  code.forEach((op, i) => {
    let c: number,
      jt = 0,
      jf = 0,
      k: number;
    if ('ld' in op)
      [c, k] = [0x20, op.ld]; // BPF_LD | BPF_W | BPF_ABS
    else if ('ret' in op)
      [c, k] = [0x06, op.ret]; // BPF_RET | BPF_K
    else if ('jeq' in op)
      [c, k, jt, jf] = [0x15, op.jeq, jump(i, op.then), jump(i, op.else)]; // BPF_JMP | BPF_JEQ | BPF_K
    else if ('jge' in op)
      [c, k, jt] = [0x35, op.jge, jump(i, op.then)]; // BPF_JMP | BPF_JGE | BPF_K
    else [c, k, jt] = [0x45, op.jset, jump(i, op.then)]; // BPF_JMP | BPF_JSET | BPF_K
    buf.writeUInt16LE(c, i * 8);
    buf.writeUInt8(jt, i * 8 + 2);
    buf.writeUInt8(jf, i * 8 + 3);
    buf.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return buf;
}
