"""Solving ARC tasks from their demonstrations: the ARC Prize submission (``jaxarc solve``).

* :mod:`jaxarc.solve.problem`: a task as the solver may see it (demonstration pairs and
  test *inputs*; test outputs never enter it);
* :mod:`jaxarc.solve.method`: the one interface every method implements (a problem in, two
  attempts per test input and a record out), and the budget;
* :mod:`jaxarc.solve.program_rl_method`: the default method, ``program-rl``, from the prior
  shipped in ``jaxarc/solve/priors``;
* :mod:`jaxarc.solve.program_rl`: a program policy learned per task by GRPO on the task's
  demonstrations, over the environment's actions;
* :mod:`jaxarc.solve.program_prior`: a prior over the kinds of actions those programs are
  made of, pretrained by reward on other tasks (``jaxarc pretrain-programs``), and
  :mod:`jaxarc.solve.prior_store`, its run directory (saved, loaded, resumed);
* :mod:`jaxarc.solve.program_variant`: the learner's experimental alternatives (ablations);
* :mod:`jaxarc.solve.search_method`: the ``search`` method and the ``random`` baseline;
* :mod:`jaxarc.solve.candidates`, :mod:`jaxarc.solve.search`, :mod:`jaxarc.solve.tiling`:
  the actions the search tries, the search, and tilings;
* :mod:`jaxarc.solve.canvas`: the static sizes a task is padded to (one rounding rule);
* :mod:`jaxarc.solve.attempts`: two attempts from ranked predictions, programs in words;
* :mod:`jaxarc.solve.policy_methods`: experimental methods that play a trained network,
  frozen (:mod:`jaxarc.solve.policy_attempts`) or fine-tuned per task
  (:mod:`jaxarc.solve.policy_finetune`);
* :mod:`jaxarc.solve.progress_log`: the tasks a long run has finished, kept so that a
  stopped run resumes;
* :mod:`jaxarc.solve.submission`: the ARC Prize submission format, its validator, pass@2.
"""
