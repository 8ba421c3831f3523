function [t, q, qd, seq] = arm_state_plot(seconds, varargin)
  % arm_state_plot(SECONDS, ARGS...) reads the arm's state (examples/arm) at 100 Hz for
  % SECONDS and plots the seven joint positions against time. ARGS are the block's command
  % line: --ard state=arm.state, --ard-domain NAME, ...
  % [T, Q, QD, SEQ] = arm_state_plot(...) also returns what was read: receive times (s since
  % the start), N-by-7 positions and velocities, the packets' sequence numbers. With
  % 'noplot' among ARGS it does not plot.
  %
  %   examples/arm/master.sh &          # the arm, simulated (see examples/arm/README.md)
  %   octave --path build/octave --path examples/octave \
  %          --eval "arm_state_plot(10, '--ard', 'state=arm.state')"
  %
  % Without a display: graphics_toolkit gnuplot; set (0, 'defaultfigurevisible', 'off')
  % before, print -dpngcairo FILE.png after (docs/octave.md).
  noplot = any (strcmp (varargin, 'noplot'));
  args = varargin(~strcmp (varargin, 'noplot'));
  % struct arm_joints (arm.h); guard closes the port when this function ends, Ctrl-C included
  [state, guard] = ard_port ('state', 'in', 'q:f64[7] qd:f64[7]');
  ard_init (args);
  n = round (seconds * 100);
  t = nan (n, 1); q = nan (n, 7); qd = nan (n, 7); seq = zeros (n, 1, 'uint64');
  t0 = tic ();
  rows = 0;
  for i = 1:n
    pause (max (0, i * 0.01 - toc (t0)));     % 100 Hz on absolute deadlines
    [s, isnew] = ard_tryrec (state);
    if isempty (isnew) || ~isnew
      continue;                               % nothing yet, or nothing new: skip the row
    end
    rows = rows + 1;
    info = ard_info (state);
    t(rows) = toc (t0);
    q(rows, :) = s.q;
    qd(rows, :) = s.qd;
    seq(rows) = info.seq;
  end
  t = t(1:rows); q = q(1:rows, :); qd = qd(1:rows, :); seq = seq(1:rows);
  if ~noplot
    plot (t, q);
    xlabel ('time [s]'); ylabel ('joint position [rad]');
    legend (arrayfun (@(j) sprintf ('q%d', j), 1:7, 'UniformOutput', false));
    title (sprintf ('arm.state, %d samples at 100 Hz', rows));
  end
end
