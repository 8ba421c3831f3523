function ard_close(p)
  % ard_close(P) detaches port P (an OUT port releases the writer role at once). Closing
  %   twice is fine; any other use of a closed handle is ardnet:ARD_ESTATE.
  ardnet_mex ('close', p);
end
