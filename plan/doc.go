// Package plan is the one change model that serves plan, diff and apply for
// both switches and hosts. A Plan is a list of per-target plans; each target
// plan is a list of Changes (create, update, delete) with the path, the value
// before and after, and the reason, and of Lacks: what the intent asks that
// the target does not have and apply cannot write (with the reason and the
// operator's fix), which diff reports as drift. Rendering (text, JSON, Markdown) lives here
// too so every command prints plans the same way. Executing a plan is the job
// of switchdrv and hostdrv; this package does no I/O beyond writing to the
// io.Writer it is given.
package plan
