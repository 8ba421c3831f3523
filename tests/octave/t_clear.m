% Clearing the MEX file closes its ports: after `clear ardnet_mex`, `clear functions` and
% `clear all` (MATLAB's `clear mex` is a variable name to Octave 7), another process can
% become the connection's writer, which it cannot while the port is open.
blk = getenv ('OCTBLOCK');
T = 'k:u32 a:i8 b:u8 c:i16 d:u16 e:i32 f:u32 g:i64 h:u64 x:f32[2] y:f64[3]';
for how = {'clear ardnet_mex', 'clear functions', 'ard_fini ()'}
  w = ard_port ('w', 'out', T, 'connection', 'c.held');
  ard_init ({});
  rc = system ([blk ' trywrite c.held']);
  assert (rc == 6, sprintf ('a C writer attached while the Octave port was open (rc %d)', rc));
  eval ([how{1} ';']);
  blk = getenv ('OCTBLOCK');
  T = 'k:u32 a:i8 b:u8 c:i16 d:u16 e:i32 f:u32 g:i64 h:u64 x:f32[2] y:f64[3]';
  rc = system ([blk ' trywrite c.held']);
  assert (rc == 0, sprintf ('after %s a C writer could not attach (rc %d)', how{1}, rc));
  assert (ardnet_mex ('nports') == 0);
  printf ('t_clear: %s released the writer\n', how{1});
end
% `clear all` also clears this script's variables: the last case, unrolled.
w = ard_port ('w', 'out', T, 'connection', 'c.held');
ard_init ({});
assert (system ([blk ' trywrite c.held']) == 6);
clear all;
assert (system ([getenv('OCTBLOCK') ' trywrite c.held']) == 0, 'clear all kept the writer');
assert (ardnet_mex ('nports') == 0);
printf ('t_clear: clear all released the writer\n');
