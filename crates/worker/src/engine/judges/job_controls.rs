//! The pause/resume/cancel handles of the judge jobs running in the worker, by job id. A job's
//! handle goes when its task ends (the [`Running`] guard the task holds is dropped), so the
//! table holds the running jobs only, however many a long session starts.

use ragscope_judge::Control;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Each handle with the number of its start, so that a task ending late never removes the
/// handle of a newer job under the same id.
#[derive(Clone, Default)]
pub struct JobControls(Rc<RefCell<Table>>);

#[derive(Default)]
struct Table {
    starts: u64,
    by_job: HashMap<u32, (u64, Control)>,
}

/// Held by a job's task: its handle, removed from the table when this is dropped.
pub struct Running {
    job: u32,
    start: u64,
    pub control: Control,
    controls: JobControls,
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut table = self.controls.0.borrow_mut();
        if table
            .by_job
            .get(&self.job)
            .is_some_and(|(s, _)| *s == self.start)
        {
            table.by_job.remove(&self.job);
        }
    }
}

impl JobControls {
    /// A new handle for `job` (replacing a handle kept under the same id).
    pub fn start(&self, job: u32) -> Running {
        let control = Control::new();
        let mut table = self.0.borrow_mut();
        table.starts += 1;
        let start = table.starts;
        table.by_job.insert(job, (start, control.clone()));
        Running {
            job,
            start,
            control,
            controls: self.clone(),
        }
    }

    pub fn get(&self, job: u32) -> Option<Control> {
        self.0.borrow().by_job.get(&job).map(|(_, c)| c.clone())
    }

    /// Takes `job`'s handle out (a cancelled job is no longer paused or resumed).
    pub fn remove(&self, job: u32) -> Option<Control> {
        self.0.borrow_mut().by_job.remove(&job).map(|(_, c)| c)
    }

    /// Takes every handle out.
    pub fn drain(&self) -> Vec<Control> {
        self.0
            .borrow_mut()
            .by_job
            .drain()
            .map(|(_, (_, c))| c)
            .collect()
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.borrow().by_job.len()
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
        // A job started again under an id whose old task has not ended yet keeps its handle
        // when the old task ends.
        let old = controls.start(4);
        let new = controls.start(4);
        drop(old);
        controls.get(4).expect("the new job 4 runs").pause();
        assert_eq!(new.control.state(), ControlState::Paused);
        drop(new);
        assert_eq!(controls.len(), 0);
    }
}
