function octbench(cprog, batches, len)
  % octbench(CPROG, BATCHES, LEN): what the Octave binding adds per call over the C library.
  % Median over BATCHES batches of LEN calls of ns per call of: an empty Octave loop, an
  % empty MEX function (octb_empty.c) without arguments and with those of a send and of a
  % tryrec, the binding's empty command (ardnet_mex('nop'): its dispatch) without and with
  % a send's arguments,
  % ard_send of a struct "q:f64[7] qd:f64[7]",
  % ard_tryrec finding the same packet again, ard_rec(p, 0) finding nothing new; the send
  % and tryrec rows through the ard_*.m wrappers and straight into ardnet_mex; then the C
  % library's ard_send/ard_tryrec in a C loop (CPROG, bench/octave/octb_c.c), in this run.
  if nargin < 2, batches = 51; end
  if nargin < 3, len = 2000; end
  T = 'q:f64[7] qd:f64[7]';
  w = ard_port ('w', 'out', T, 'connection', 'octb.o');
  r = ard_port ('r', 'in', T, 'connection', 'octb.o');
  ard_init ({});
  s = struct ('q', zeros (1, 7), 'qd', zeros (1, 7));
  ard_send (w, s);
  rows = {
    'empty loop',                      @(n) loop_empty (n)
    'empty MEX function octb_empty()', @(n) loop_empty_mex (n)
    'octb_empty(''send'', w, s)',        @(n) loop_empty_mex_send (n, w, s)
    'octb_empty(''tryrec'', r)',         @(n) loop_empty_mex_tryrec (n, r)
    'ardnet_mex(''nop'')',               @(n) loop_nop (n)
    'ardnet_mex(''nop'', w, s)',         @(n) loop_nop_args (n, w, s)
    'ard_send(w, s)',                  @(n) loop_send (n, w, s)
    'ardnet_mex(''send'', w, s)',        @(n) loop_send_direct (n, w, s)
    'ard_tryrec(r) (same packet)',     @(n) loop_tryrec (n, r)
    'ardnet_mex(''tryrec'', r)',         @(n) loop_tryrec_direct (n, r)
    'ard_rec(r, 0) (nothing new)',     @(n) loop_rec0 (n, r)
  };
  % Batches of the rows take turns, so that a change of the machine's load between rows
  % touches them all alike.
  t = zeros (batches, size (rows, 1));
  for b = 1:batches
    for i = 1:size (rows, 1)
      t(b, i) = rows{i, 2} (len) / len * 1e9;
    end
  end
  res = median (t, 1)';
  ard_fini ();
  [st, out] = system (sprintf ('%s %d %d', cprog, batches, 200000));
  if st ~= 0
    error ('octbench: %s failed: %s', cprog, out);
  end
  c = sscanf (out, 'send %f\ntryrec %f');
  printf ('octbench: %s, %d batches of %d calls, median ns per call\n', version (), batches, len);
  printf ('%-40s %10s\n', 'call', 'ns/call');
  for i = 1:size (rows, 1)
    printf ('%-40s %10.0f\n', rows{i, 1}, res(i));
  end
  printf ('%-40s %10.1f\n', 'C: ard_send', c(1));
  printf ('%-40s %10.1f\n', 'C: ard_tryrec (same packet)', c(2));
  printf ('Octave adds per send:   %.0f ns (wrapper), %.0f ns (direct)\n', res(7) - c(1), ...
          res(8) - c(1));
  printf ('Octave adds per tryrec: %.0f ns (wrapper), %.0f ns (direct)\n', res(9) - c(2), ...
          res(10) - c(2));
  printf ('of which the empty MEX function with the same arguments: send %.0f ns, tryrec %.0f ns\n', ...
          res(3), res(4));
  printf ('the binding''s own work (direct, less that, less C): send %.0f ns, tryrec %.0f ns\n', ...
          res(8) - res(3) - c(1), res(10) - res(4) - c(2));
end

function e = loop_empty(n)
  t0 = tic (); for i = 1:n, end; e = toc (t0);
end
function e = loop_empty_mex(n)
  t0 = tic (); for i = 1:n, octb_empty (); end; e = toc (t0);
end
function e = loop_empty_mex_send(n, w, s)
  t0 = tic (); for i = 1:n, octb_empty ('send', w, s); end; e = toc (t0);
end
function e = loop_empty_mex_tryrec(n, r)
  t0 = tic (); for i = 1:n, octb_empty ('tryrec', r); end; e = toc (t0);
end
function e = loop_nop(n)
  t0 = tic (); for i = 1:n, ardnet_mex ('nop'); end; e = toc (t0);
end
function e = loop_nop_args(n, w, s)
  t0 = tic (); for i = 1:n, ardnet_mex ('nop', w, s); end; e = toc (t0);
end
function e = loop_send(n, w, s)
  t0 = tic (); for i = 1:n, ard_send (w, s); end; e = toc (t0);
end
function e = loop_send_direct(n, w, s)
  t0 = tic (); for i = 1:n, ardnet_mex ('send', w, s); end; e = toc (t0);
end
function e = loop_tryrec(n, r)
  t0 = tic (); for i = 1:n, p = ard_tryrec (r); end; e = toc (t0);
end
function e = loop_tryrec_direct(n, r)
  t0 = tic (); for i = 1:n, p = ardnet_mex ('tryrec', r); end; e = toc (t0);
end
function e = loop_rec0(n, r)
  t0 = tic (); for i = 1:n, p = ard_rec (r, 0); end; e = toc (t0);
end
