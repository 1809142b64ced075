"""WIP (branch rgda-wip): rgda on make_matrix_sensing(20000), relative error by eps and seed.

    python benchmarks/rgda_sweep_wip.py '{"clip_smoothness": 0.1}' "[1, 8]" 200
"""
import skdp, numpy as np, sys, json, time
from skdp.matrix_sensing import DPMatrixSensing, make_matrix_sensing
from skdp.solvers import get_solver
X,y,Xs=make_matrix_sensing(20000, shape=(20,20), rank=3, noise=0.01, random_state=0)
sp=json.loads(sys.argv[1]) if len(sys.argv)>1 else {}
eps_list=json.loads(sys.argv[2]) if len(sys.argv)>2 else [1,8]
mi=int(sys.argv[3]) if len(sys.argv)>3 else None
for eps in eps_list:
  for s in range(2):
    t=time.time()
    est=DPMatrixSensing(shape=(20,20), rank=3, epsilon=eps, solver='rgda', max_iter=mi, random_state=s, solver_params=sp or None, accountant=skdp.BudgetAccountant())
    est.fit(X,y)
    err=np.linalg.norm(est.low_rank_matrix_-Xs)/np.linalg.norm(Xs)
    print(eps, s, round(err,4), est.n_iter_, est.n_escapes_, round(time.time()-t,1), flush=True)
