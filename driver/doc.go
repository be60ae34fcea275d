// Package driver turns chat configs into dialogues by driving a real
// code-server in headless Chromium, through the plugin under simulation,
// the way a developer would, with the plugin's model requests answered
// by the capture endpoint.
//
// It owns a run's simulator slots (Runner): the run's browser and editors,
// started side by side (run.go); each slot a window on the editor every
// slot shares (isolation window) or a window on an editor of its own
// (isolation editor) (slot.go); the recovery of a slot between configs —
// a crashed editor started again, a dead window reopened, a relaunched
// browser — and the replacement of a used window (recycle.go, Recycle);
// the record log that makes a run resumable (records.go); the lock on a
// run folder and the end of a killed run's processes (lock.go, stale.go);
// and the checks that open a slot of their own: the doctor (doctor.go),
// an adapter's live validation (ValidateLive) and the probe of a plugin
// (Probe). The farm's workers schedule the configs and drive each on a
// slot (Runner.DriveSlot): there is no other scheduler; `dialogfarm run`,
// `drive` and `worker` drive through the farm (package pipeline), and so
// do this package's tests.
//
// What it may not touch is its sub-packages' own: the editor's processes,
// settings, plugins and activation failures are package driver/editor's;
// Chromium and the DevTools libraries are package driver/browser's; what
// happens inside a window — the workbench's steps, the plugin's chat view,
// one dialogue — is package driver/workbench's, which the slot hands a
// window and an editor and asks to drive a config (workbench.Session).
// This package never reads or acts on a page itself.
package driver
