//! The pause/resume/cancel handles of the judge jobs running in the worker, by job id. A job's
//! handle goes when its task ends (the [`Running`] guard the task holds is dropped), so the
//! table holds the running jobs only, however many a long session starts.

use ragscope_judge::Control;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

#[derive(Clone, Default)]
pub struct JobControls(Rc<RefCell<HashMap<u32, Control>>>);

/// Held by a job's task: its handle, removed from the table when this is dropped.
pub struct Running {
    job: u32,
    pub control: Control,
    controls: JobControls,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.controls.0.borrow_mut().remove(&self.job);
    }
}

impl JobControls {
    /// A new handle for `job` (replacing a handle kept under the same id).
    pub fn start(&self, job: u32) -> Running {
        let control = Control::new();
        self.0.borrow_mut().insert(job, control.clone());
        Running {
            job,
            control,
            controls: self.clone(),
        }
    }

    pub fn get(&self, job: u32) -> Option<Control> {
        self.0.borrow().get(&job).cloned()
    }

    /// Takes `job`'s handle out (a cancelled job is no longer paused or resumed).
    pub fn remove(&self, job: u32) -> Option<Control> {
        self.0.borrow_mut().remove(&job)
    }

    /// Takes every handle out.
    pub fn drain(&self) -> Vec<Control> {
        self.0.borrow_mut().drain().map(|(_, c)| c).collect()
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.borrow().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragscope_judge::runner::ControlState;

    #[test]
    fn a_job_s_handle_lives_as_long_as_its_task() {
        let controls = JobControls::default();
        let first = controls.start(1);
        let second = controls.start(2);
        assert_eq!(controls.len(), 2);
        // The page's Pause reaches the running task through the table.
        controls.get(2).expect("job 2 runs").pause();
        assert_eq!(second.control.state(), ControlState::Paused);
        assert_eq!(first.control.state(), ControlState::Running);
        drop(first);
        assert_eq!(controls.len(), 1);
        assert!(controls.get(1).is_none());
        // Cancel takes the handle out; the task's end then finds nothing to remove.
        controls.remove(2).expect("job 2 runs").cancel();
        assert_eq!(second.control.state(), ControlState::Cancelled);
        drop(second);
        assert_eq!(controls.len(), 0);
        let third = controls.start(3);
        assert_eq!(controls.drain().len(), 1);
        drop(third);
        assert_eq!(controls.len(), 0);
    }
}
