% Clearing the MEX file closes its ports: after `clear ardnet_mex`, `clear functions`,
% `clear -f`, `clear all` and `ard_fini` another process can become the connection's
% writer, which it cannot while the port is open. MATLAB's `clear mex` is, to Octave 7,
% `clear` of the name 'mex' (a variable of that name, else Octave's own function mex.m):
% it clears no MEX file, and the port stays open.
blk = getenv ('OCTBLOCK');
T = 'k:u32 a:i8 b:u8 c:i16 d:u16 e:i32 f:u32 g:i64 h:u64 x:f32[2] y:f64[3]';
for how = {'clear ardnet_mex', 'clear functions', 'clear -f', 'ard_fini ()'}
  w = ard_port ('w', 'out', T, 'connection', 'c.held');
  ard_init ({});
  rc = system ([blk ' trywrite c.held']);
  assert (rc == 6, sprintf ('a C writer attached while the Octave port was open (rc %d)', rc));
  eval ([how{1} ';']);
  rc = system ([blk ' trywrite c.held']);
  assert (rc == 0, sprintf ('after %s a C writer could not attach (rc %d)', how{1}, rc));
  assert (ardnet_mex ('nports') == 0);
  printf ('t_clear: %s released the writer\n', how{1});
end

% clear mex: nothing of the binding is cleared.
w = ard_port ('w', 'out', T, 'connection', 'c.held');
ard_init ({});
clear mex;
assert (system ([blk ' trywrite c.held']) == 6, 'clear mex released the writer');
assert (ardnet_mex ('nports') == 1 && ard_info (w).seq == 0);
printf ('t_clear: clear mex left the port open (Octave has no such command)\n');

% A guard outliving its port (the MEX file cleared first) closes nothing and raises nothing.
ard_fini ();
[w, guard] = ard_port ('w', 'out', T, 'connection', 'c.held');
ard_init ({});
assert (system ([blk ' trywrite c.held']) == 6);
clear ardnet_mex;
assert (system ([blk ' trywrite c.held']) == 0);
g = ard_port ('g', 'out', T, 'connection', 'c.other');
clear guard;
assert (ardnet_mex ('nports') == 1);                    % g was not touched
ard_close (g);

% `clear all` also clears this script's variables: unrolled, with a guard alive.
[w, guard] = ard_port ('w', 'out', T, 'connection', 'c.held');
ard_init ({});
assert (system ([blk ' trywrite c.held']) == 6);
clear all;
assert (system ([getenv('OCTBLOCK') ' trywrite c.held']) == 0, 'clear all kept the writer');
assert (ardnet_mex ('nports') == 0);
printf ('t_clear: clear all released the writer\n');
