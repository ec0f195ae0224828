// Package cputime reads CPU time, the cost measure benchmarks report next
// to wall time: unlike wall time it does not grow when other processes
// share the CPUs. Process is the whole process's user + system time;
// Thread is the calling OS thread's (Linux only; lock the goroutine to its
// thread first). Used by the benchmarks of several packages.
//
// Imports: the standard library only.
package cputime
