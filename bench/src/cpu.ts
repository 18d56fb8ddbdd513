import { readFileSync, readdirSync } from 'node:fs'

/** What /proc/<pid>/stat says of a process: its command name, process group, and CPU seconds (user + system) so far. */
interface ProcessCpu {
  command: string
  group: number
  seconds: number
}

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux's every architecture we run on). */
const TICKS_PER_SECOND = 100

function processes(): ProcessCpu[] {
  const found: ProcessCpu[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const close = stat.lastIndexOf(')')
      const fields = stat.slice(close + 2).split(' ')
      found.push({
        command: stat.slice(stat.indexOf('(') + 1, close),
        group: Number(fields[2]),
        seconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND,
      })
    } catch {
      // Gone between the listing and the read.
    }
  }
  return found
}

/** Whether /proc can tell (Linux); elsewhere the CPU columns are left out. */
export const canReadCpu = (() => {
  try {
    readdirSync('/proc/self')
    return true
  } catch {
    return false
  }
})()

/**
 * CPU seconds used so far by the process group `group` (a service started through the tsx CLI
 * heads a group of its own) and by the Postgres server's processes. Postgres's figure counts
 * every client of the server: taken around a row while the benchmark's load is the only work.
 */
export function cpuSnapshot(group: number): { service: number; postgres: number } {
  let service = 0
  let postgres = 0
  for (const process of processes()) {
    if (process.group === group) service += process.seconds
    if (process.command.startsWith('postgres')) postgres += process.seconds
  }
  return { service, postgres }
}
