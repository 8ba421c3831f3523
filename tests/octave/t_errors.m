% One Octave process: option stripping, tryrec's three answers, timeouts, type mismatches,
% a second writer, closed handles, opaque ports, ard_fini, a second ard_init and ports declared
% again (a script run again in the same session).
T = 'q:f64[3] n:i32';
w = ard_port ('w', 'out', T, 'connection', 'e.a');
r = ard_port ('r', 'in', T, 'connection', 'e.a');
rest = ard_init ({'x', '--ard', 'w=e.b', 'y', '--ard-spin=1000', '--', '--ard-z'});
assert (isequal (rest, {'x', 'y', '--', '--ard-z'}));
assert (strcmp (ard_info (w).connection, 'e.b'));      % --ard wins over 'connection'
ard_close (w);
w = ard_port ('e.a', 'out', T);                         % after init: attaches at once

% tryrec: nothing yet -> [] [], then new, then the same packet again
[p, isnew] = ard_tryrec (r);
assert (isempty (p) && isempty (isnew));
% rec with a timeout returns [] when nothing newer comes, after at least the timeout
t0 = tic; p = ard_rec (r, 0.3); el = toc (t0);
assert (isempty (p) && el >= 0.29);
p = ard_rec (r, 0);
assert (isempty (p));
ard_send (w, struct ('q', [1 2 3], 'n', int32 (-4)));
[p, isnew] = ard_tryrec (r);
assert (isnew == true && isequal (p.q, [1 2 3]) && p.n == -4 && isa (p.n, 'int32'));
[p, isnew] = ard_tryrec (r);
assert (islogical (isnew) && isnew == false && isequal (p.q, [1 2 3]));
p = ard_rec (r, 0.05);
assert (isempty (p));                                   % nothing newer than the last one
ard_send (w, struct ('q', [4; 5; 6], 'n', 2.6));        % column accepted; 2.6 rounds to 3
ard_send (w, struct ('q', [7 8 9], 'n', 1e12));         % saturates at intmax('int32')
p = ard_rec (r, 1);
assert (isequal (p.q, [7 8 9]) && p.n == intmax ('int32'));
assert (ard_info (r).skipped == 1 && ard_info (r).seq == 3);
ard_send (w, struct ('q', [0 0 0], 'n', 5));
p = ard_rec (r);
assert (p.n == 5);

% Type mismatches: every one names the port and the field.
m = expect_error ('ardnet:ARD_ETYPE', @ard_send, w, struct ('q', [1 2], 'n', 1));
assert (~isempty (strfind (m, 'field ''q'' has 2 elements')));
m = expect_error ('ardnet:ARD_ETYPE', @ard_send, w, struct ('q', [1 2 3]));
assert (~isempty (strfind (m, 'lacks field ''n''')));
m = expect_error ('ardnet:ARD_ETYPE', @ard_send, w, struct ('q', [1 2 3], 'n', 1, 'z', 0));
assert (~isempty (strfind (m, 'has field ''z''')));
m = expect_error ('ardnet:ARD_ETYPE', @ard_send, w, struct ('q', 'abc', 'n', 1));
assert (~isempty (strfind (m, 'real numeric')));
expect_error ('ardnet:ARD_ETYPE', @ard_send, w, [1 2 3]);
m = expect_error ('ardnet:ARD_ETYPE', @ard_port, 'r2', 'in', 'q:f64[4] n:i32', 'connection', 'e.a');
assert (~isempty (strfind (m, 'e.a')));
m = expect_error ('ardnet:ARD_ETYPE', @ard_port, 'bad', 'in', 'q:f65');
assert (~isempty (strfind (m, 'f65')));
m = expect_error ('ardnet:ARD_EBUSY', @ard_port, 'w2', 'out', T, 'connection', 'e.a');
assert (~isempty (strfind (m, sprintf ('pid %d', getpid ()))));
expect_error ('ardnet:ARD_EINVAL', @ard_port, 'x', 'sideways', T);
expect_error ('ardnet:ARD_EINVAL', @ard_port, 'x');                 % usage
expect_error ('ardnet:ARD_EINVAL', @ard_load, 'f.mcap', 'rate');
expect_error ('ardnet:ARD_EINVAL', @ard_send, r, struct ('q', [1 2 3], 'n', 1));   % IN port

% Adopting the existing connection's type, and an opaque port.
a = ard_port ('adopt', 'in', '', 'connection', 'e.a');
assert (strcmp (ard_info (a).type, 'q:f64[3] n:i32'));
ob = ard_port ('ob', 'out', '', 'size', 5, 'connection', 'e.o');
oi = ard_port ('oi', 'in', '', 'size', 5, 'connection', 'e.o');
ard_send (ob, uint8 ([1 2 3 4 250]));
p = ard_rec (oi, 1);
assert (isequal (p, uint8 ([1 2 3 4 250])));
expect_error ('ardnet:ARD_ETYPE', @ard_send, ob, uint8 ([1 2]));

% Closed handles, closing twice, ard_fini.
ard_close (r);
ard_close (r);
expect_error ('ardnet:ARD_ESTATE', @ard_rec, r, 0);
ard_fini ();
assert (ardnet_mex ('nports') == 0);
expect_error ('ardnet:ARD_ESTATE', @ard_send, w, struct ('q', [1 2 3], 'n', 1));
w = ard_port ('w', 'out', T, 'connection', 'e.a');      % the writer role was released
rest = ard_init ({});
assert (isempty (rest));
ard_send (w, struct ('q', [1 2 3], 'n', 1));

% Running a script again (docs/octave.md, "Ctrl-C, clear, and what stays behind").
% A second ard_init starts the block anew: ports declared before the last ard_init are closed,
% those declared since are kept (same handle) and wired by the new options.
late = ard_port ('late', 'out', T, 'connection', 'e.late');
ard_init ({'--ard', 'late=e.moved'});
expect_error ('ardnet:ARD_ESTATE', @ard_send, w, struct ('q', [1 2 3], 'n', 1));
assert (ardnet_mex ('nports') == 1 && strcmp (ard_info (late).connection, 'e.moved'));
ard_send (late, struct ('q', [1 2 3], 'n', 1));
% ... and a port it carried over is replaced alone when declared again.
late2 = ard_port ('late', 'out', T, 'connection', 'e.late');
expect_error ('ardnet:ARD_ESTATE', @ard_info, late);
assert (ardnet_mex ('nports') == 1 && strcmp (ard_info (late2).connection, 'e.moved'));
% Before ard_init, declaring a name again replaces that port (any direction).
ard_fini ();
a1 = ard_port ('w', 'out', T, 'connection', 'e.a');
k1 = ard_port ('keep', 'in', T, 'connection', 'e.k');
a2 = ard_port ('w', 'in', T, 'connection', 'e.a');
assert (ardnet_mex ('nports') == 2);
expect_error ('ardnet:ARD_ESTATE', @ard_info, a1);
ard_init ({'--ard', 'w=e.b'});
assert (strcmp (ard_info (a2).direction, 'in') && strcmp (ard_info (a2).connection, 'e.b'));
% After ard_init, declaring again a name declared before it starts the block anew: the other
% ports of that run are closed, the options forgotten; the new port waits for ard_init.
a3 = ard_port ('w', 'out', T, 'connection', 'e.a');
assert (ardnet_mex ('nports') == 1);
expect_error ('ardnet:ARD_ESTATE', @ard_info, k1);
m = expect_error ('ardnet:ARD_ESTATE', @ard_send, a3, struct ('q', [1 2 3], 'n', 1));
assert (~isempty (strfind (m, 'call ard_init first')));
ard_init ({});
assert (strcmp (ard_info (a3).connection, 'e.a'));      % --ard w=e.b was forgotten
ard_send (a3, struct ('q', [1 2 3], 'n', 7));
printf ('t_errors: ok\n');
