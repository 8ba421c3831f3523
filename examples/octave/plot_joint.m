function s = plot_joint(file, joint, conn)
  % plot_joint(FILE, JOINT) loads a recording made with `ard record` (e.g. of examples/arm:
  % `ard record 'arm.*' -o run.mcap --duration 10`) and plots joint JOINT's position and
  % reference against time, both resampled onto one 1 kHz time base.
  % plot_joint(FILE, JOINT, CONN) plots connection CONN's field q instead of arm.state.
  if nargin < 2
    joint = 1;
  end
  log = ard_load (file, 'rate', 1000);
  if nargin < 3
    s = log.arm_state;
  else
    s = log.(regexprep (conn, '[^A-Za-z0-9_]', '_'));
  end
  plot (s.t, s.q(:, joint));
  hold on;
  if isfield (log, 'arm_ref')
    plot (log.arm_ref.t, log.arm_ref.q(:, joint), '--');
    legend ('state', 'reference');
  end
  hold off;
  xlabel ('time [s]'); ylabel (sprintf ('joint %d [rad]', joint));
  title (file, 'Interpreter', 'none');
end
