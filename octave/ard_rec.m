function packet = ard_rec(p, timeout)
  % PACKET = ard_rec(P) waits until a packet newer than the last one P returned exists and
  %   returns the newest (a struct, one field per descriptor field, arrays as row vectors).
  % PACKET = ard_rec(P, TIMEOUT) waits at most TIMEOUT seconds; [] when nothing newer came
  %   (TIMEOUT 0: do not wait). Ctrl-C ends the wait within 50 ms with ardnet:ARD_EINTR.
  if nargin < 2
    timeout = -1;
  end
  packet = ardnet_mex ('rec', p, double (timeout));
end
