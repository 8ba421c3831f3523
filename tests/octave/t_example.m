% Both examples of examples/octave, run headless (gnuplot toolkit, invisible figures, PNG
% files in $PLOTDIR), with their plots checked against what the C writers sent (octblock arm:
% q(j) = k + (j-1)/8, qd = -k, seq = k).
warning ('off', 'Octave:gnuplot-graphics');
graphics_toolkit ('gnuplot');
set (0, 'defaultfigurevisible', 'off');
out = getenv ('PLOTDIR');
lines_of = @(f) flipud (findobj (get (f, 'currentaxes'), 'type', 'line'));  % in plot order

% 1. arm_state_plot: the arm's state read at 100 Hz for 1 s: about 100 rows, each one a
%    consistent packet, newer from row to row; one line per joint holding those values.
f = figure ();
[t, q, qd, seq] = arm_state_plot (1, '--ard', 'state=arm.state');
n = numel (t);
printf ('t_example: arm_state_plot read %d rows\n', n);
assert (n >= 10 && n <= 100);
k = double (seq);
assert (isequal (q, k + (0:6) / 8) && isequal (qd, repmat (-k, 1, 7)));
assert (all (diff (k) > 0) && all (diff (t) > 0));
assert (ardnet_mex ('nports') == 0);                    % the example closed its port
h = lines_of (f);
assert (numel (h) == 7, sprintf ('%d lines plotted, 7 joints', numel (h)));
for j = 1:7
  assert (isequal (get (h(j), 'xdata')(:), t));
  assert (isequal (get (h(j), 'ydata')(:), k + (j - 1) / 8), sprintf ('line of joint %d', j));
end
check_png (f, fullfile (out, 'arm_state.png'));
close (f);
% Called again in the same session (its second ard_init starts the block anew): newer packets.
[t2, q2, qd2, seq2] = arm_state_plot (0.3, '--ard', 'state=arm.state', 'noplot');
assert (numel (t2) >= 3 && double (seq2(1)) > k(end) && isequal (q2(:, 1), double (seq2)));
assert (ardnet_mex ('nports') == 0);

% 2. plot_joint: joint 3 of a recording of arm.state and arm.ref on a 1 kHz time base. Each
%    plotted value is the newest packet of its connection recorded at or before its time
%    (NaN before the first), and that packet's joint 3 as sent.
file = getenv ('MCAP');
f = figure ();
plot_joint (file, 3);
raw = ard_load (file);
h = lines_of (f);
assert (numel (h) == 2, sprintf ('%d lines plotted, state and reference', numel (h)));
conns = {'arm_state', 'arm_ref'};
last = double (max (raw.arm_state.log_ns(end), raw.arm_ref.log_ns(end)) - ...
               min (raw.arm_state.log_ns(1), raw.arm_ref.log_ns(1))) * 1e-9;
for c = 1:2
  r = raw.(conns{c});
  x = get (h(c), 'xdata')(:);
  y = get (h(c), 'ydata')(:);
  assert (numel (x) == floor (last * 1000 + 1e-6) + 1 && max (abs (x - (0:numel (x) - 1)' / 1000)) < 1e-9);
  assert (numel (r.t) > 50, sprintf ('%s: %d packets recorded', conns{c}, numel (r.t)));
  for i = 1:numel (x)
    newest = find (r.t <= x(i), 1, 'last');
    if isempty (newest)
      assert (isnan (y(i)));
    else
      assert (y(i) == double (r.seq(newest)) + 2 / 8, sprintf ('%s at %g s', conns{c}, x(i)));
    end
  end
  printf ('t_example: plot_joint %s: %d points, %d packets\n', conns{c}, numel (x), numel (r.t));
end
check_png (f, fullfile (out, 'joint.png'));
close (f);
printf ('t_example: ok\n');
