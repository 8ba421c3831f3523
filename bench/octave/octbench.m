function octbench(cprog, batches, len)
  % octbench(CPROG, BATCHES, LEN): what the Octave binding adds per call over the C library.
  % Median over BATCHES batches of LEN calls of ns per call of: an empty Octave loop, an
  % empty MEX call (ardnet_mex('nop')), ard_send of a struct "q:f64[7] qd:f64[7]",
  % ard_tryrec finding the same packet again, ard_rec(p, 0) finding nothing new; the send
  % and tryrec rows through the ard_*.m wrappers and straight into ardnet_mex; then the C
  % library's ard_send/ard_tryrec in a C loop (CPROG, bench/octave/octb_c.c), in this run.
  if nargin < 2, batches = 21; end
  if nargin < 3, len = 2000; end
  T = 'q:f64[7] qd:f64[7]';
  w = ard_port ('w', 'out', T, 'connection', 'octb.o');
  r = ard_port ('r', 'in', T, 'connection', 'octb.o');
  ard_init ({});
  s = struct ('q', zeros (1, 7), 'qd', zeros (1, 7));
  ard_send (w, s);
  rows = {
    'empty loop',                      @(n) loop_empty (n)
    'empty MEX call ardnet_mex(''nop'')', @(n) loop_nop (n)
    'ard_send(w, s)',                  @(n) loop_send (n, w, s)
    'ardnet_mex(''send'', w, s)',        @(n) loop_send_direct (n, w, s)
    'ard_tryrec(r) (same packet)',     @(n) loop_tryrec (n, r)
    'ardnet_mex(''tryrec'', r)',         @(n) loop_tryrec_direct (n, r)
    'ard_rec(r, 0) (nothing new)',     @(n) loop_rec0 (n, r)
  };
  res = zeros (size (rows, 1), 1);
  for i = 1:size (rows, 1)
    t = zeros (batches, 1);
    for b = 1:batches
      t(b) = rows{i, 2} (len) / len * 1e9;
    end
    res(i) = median (t);
  end
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
  printf ('Octave adds per send:   %.0f ns (wrapper), %.0f ns (direct), empty MEX call %.0f ns\n', ...
          res(3) - c(1), res(4) - c(1), res(2));
  printf ('Octave adds per tryrec: %.0f ns (wrapper), %.0f ns (direct)\n', ...
          res(5) - c(2), res(6) - c(2));
end

function e = loop_empty(n)
  t0 = tic (); for i = 1:n, end; e = toc (t0);
end
function e = loop_nop(n)
  t0 = tic (); for i = 1:n, ardnet_mex ('nop'); end; e = toc (t0);
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
