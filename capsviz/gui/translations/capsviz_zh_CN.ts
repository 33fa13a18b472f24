<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name></name>
    <message>
        <source>Capsule Network explorer</source>
        <translation>胶囊网络探索器</translation>
    </message>
    <message>
        <source>overlapping digits (MultiMNIST)</source>
        <translation>重叠数字（MultiMNIST）</translation>
    </message>
    <message>
        <source>settings: {problems}; the app uses its defaults there</source>
        <translation>设置：{problems}——这些项改用默认值</translation>
    </message>
    <message>
        <source>&lt;a href=&quot;tour&quot;&gt;New to capsule networks? Take the tour&lt;/a&gt;</source>
        <translation>&lt;a href=&quot;tour&quot;&gt;初次接触胶囊网络？跟着导览走一遍&lt;/a&gt;</translation>
    </message>
    <message>
        <source>A dozen steps on the live views (Help → Tour, any time; Esc leaves it)</source>
        <translation>在实时视图上走十几步（随时可从 帮助 → 导览 打开；按 Esc 退出）</translation>
    </message>
    <message>
        <source>Training needs the 60,000 MNIST training digits.</source>
        <translation>训练需要 60,000 个 MNIST 训练数字。</translation>
    </message>
    <message>
        <source>Capsule lengths</source>
        <translation>胶囊长度</translation>
    </message>
    <message>
        <source>Pose</source>
        <translation>姿态</translation>
    </message>
    <message>
        <source>Routing</source>
        <translation>路由</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Votes</source>
        <translation>投票</translation>
    </message>
    <message>
        <source>Transforms</source>
        <translation>变换</translation>
    </message>
    <message>
        <source>MNIST browser</source>
        <translation>MNIST 浏览器</translation>
    </message>
    <message>
        <source>Robustness</source>
        <translation>鲁棒性</translation>
    </message>
    <message>
        <source>MNIST is in its folder already</source>
        <translation>MNIST 已经在它的文件夹里了</translation>
    </message>
    <message>
        <source>the transforms sweep is of an earlier input: show the Transforms dock to bring it up to date</source>
        <translation>变换扫描是之前输入的结果：显示“变换”停靠窗即可更新</translation>
    </message>
    <message>
        <source>the robustness curves are not measured: Measure in their dock</source>
        <translation>鲁棒性曲线尚未测量：请在其停靠窗中点击“测量”</translation>
    </message>
    <message>
        <source>training into {name}</source>
        <translation>正在训练并保存到 {name}</translation>
    </message>
    <message>
        <source>, training into {name}</source>
        <translation>，正在训练并保存到 {name}</translation>
    </message>
    <message>
        <source>Cannot scan the test pairs</source>
        <translation>无法查找测试数字对</translation>
    </message>
    <message>
        <source>model: {summary}</source>
        <translation>模型：{summary}</translation>
    </message>
    <message>
        <source>CNN: training here</source>
        <translation>CNN：正在这里训练</translation>
    </message>
    <message>
        <source>CNN: {name}</source>
        <translation>CNN：{name}</translation>
    </message>
    <message>
        <source>CNN: {name} — {accuracy:.2f} %</source>
        <translation>CNN：{name}——{accuracy:.2f} %</translation>
    </message>
    <message>
        <source>cannot write files there</source>
        <translation>无法在此写入文件</translation>
    </message>
    <message>
        <source>the file was not written</source>
        <translation>文件未能写入</translation>
    </message>
    <message>
        <source>Export figures into folder</source>
        <translation>把图表导出到文件夹</translation>
    </message>
    <message>
        <source>Export figures</source>
        <translation>导出图表</translation>
    </message>
    <message>
        <source>Could not write the figures: {error}</source>
        <translation>无法写入图表：{error}</translation>
    </message>
    <message>
        <source>wrote {n} files to {folder}</source>
        <translation>已把 {n} 个文件写入 {folder}</translation>
    </message>
    <message>
        <source>Nothing to export</source>
        <translation>没有可导出的内容</translation>
    </message>
    <message>
        <source>Draw a digit first.</source>
        <translation>请先写一个数字。</translation>
    </message>
    <message>
        <source>Export routing trace</source>
        <translation>导出路由记录</translation>
    </message>
    <message>
        <source>NumPy archive (*.npz)</source>
        <translation>NumPy 归档 (*.npz)</translation>
    </message>
    <message>
        <source>saved {path}</source>
        <translation>已保存 {path}</translation>
    </message>
    <message>
        <source>Open &amp;image…</source>
        <translation>打开图像(&amp;I)…</translation>
    </message>
    <message>
        <source>&amp;Paste image</source>
        <translation>粘贴图像(&amp;P)</translation>
    </message>
    <message>
        <source>Open &amp;checkpoint…</source>
        <translation>打开检查点(&amp;C)…</translation>
    </message>
    <message>
        <source>Open comparison C&amp;NN…</source>
        <translation>打开对照 C&amp;NN…</translation>
    </message>
    <message>
        <source>&amp;Save checkpoint as…</source>
        <translation>检查点另存为(&amp;S)…</translation>
    </message>
    <message>
        <source>Export &amp;figures (PNG + SVG)…</source>
        <translation>导出图表（PNG + SVG）(&amp;F)…</translation>
    </message>
    <message>
        <source>Export routing &amp;trace (.npz)…</source>
        <translation>导出路由记录（.npz）(&amp;T)…</translation>
    </message>
    <message>
        <source>&amp;Download MNIST…</source>
        <translation>下载 MNIST(&amp;D)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Single digits (MNIST)</source>
        <translation>单个数字（MNIST）(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Overlapping digits (MultiMNIST)</source>
        <translation>重叠数字（MultiMNIST）(&amp;O)</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;Tour</source>
        <translation>导览(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;About capsviz</source>
        <translation>关于 capsviz(&amp;A)</translation>
    </message>
    <message>
        <source>Back</source>
        <translation>上一步</translation>
    </message>
    <message>
        <source>Next</source>
        <translation>下一步</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Leave the tour (Esc)</source>
        <translation>退出导览（Esc）</translation>
    </message>
    <message>
        <source>{k} of {n}</source>
        <translation>第 {k} 步，共 {n} 步</translation>
    </message>
    <message>
        <source>…</source>
        <translation>…</translation>
    </message>
    <message>
        <source>A capsule is a vector</source>
        <translation>胶囊是一个向量</translation>
    </message>
    <message>
        <source>A neuron gives one number; a capsule gives a vector. Its length says how sure the network is that the thing the capsule stands for is present, its direction says how that thing looks. Here a test digit is loaded: the ten bars are the lengths ‖v_j‖ of the ten digit capsules, and the longest one ({answer}, length {length}) is the answer.</source>
        <translation>一个神经元输出一个数，一个胶囊输出一个向量。向量的长度表示网络有多确定这个胶囊所代表的东西存在，方向表示它长什么样。这里载入了一个测试数字：十根柱子是十个数字胶囊的长度 ‖v_j‖，最长的那根（{answer}，长度 {length}）就是网络的回答。</translation>
    </message>
    <message>
        <source>Squash keeps a length below 1</source>
        <translation>挤压函数让长度小于 1</translation>
    </message>
    <message>
        <source>A length can only read as a probability if it stays below 1. The squash function shrinks a short vector almost to nothing and a long one to just under 1, and never turns it: v = ‖s‖² / (1 + ‖s‖²) · s / ‖s‖. Every bar here has gone through it, so none reaches 1.</source>
        <translation>长度要当作概率来读，就必须小于 1。挤压函数把短向量压到几乎为零，把长向量压到略小于 1，而方向始终不变：v = ‖s‖² / (1 + ‖s‖²) · s / ‖s‖。这里每根柱子都经过了它，所以没有一根达到 1。</translation>
    </message>
    <message>
        <source>Primary capsules: 32 types on a grid</source>
        <translation>主胶囊：网格上的 32 种类型</translation>
    </message>
    <message>
        <source>Below the bars are the {primary} primary capsules, the first capsule layer: 32 types, each a {grid} × {grid} grid of 8-dimensional capsules computed by a convolution from the pixels. Each tile is one type; a bright cell is a long capsule, a part that type has found at that place.</source>
        <translation>柱状图下方是 {primary} 个主胶囊，也就是第一层胶囊：共 32 种类型，每种是一个 {grid} × {grid} 的网格，每格是一个由卷积从像素算出的 8 维胶囊。每个小方块是一种类型；亮的格子是长胶囊，表示这种类型在那个位置找到了某个部件。</translation>
    </message>
    <message>
        <source>Every primary capsule votes</source>
        <translation>每个主胶囊都投票</translation>
    </message>
    <message>
        <source>Each primary capsule i predicts every digit capsule j: it multiplies its vector by a learned matrix, û_j|i = W_ij u_i. The dots are these votes for the digit shown, seen from the two directions in which they spread most. Votes that land close together agree on what digit {answer} should look like.</source>
        <translation>每个主胶囊 i 都预测每个数字胶囊 j：把自己的向量乘以一个学到的矩阵，û_j|i = W_ij u_i。图中的点就是对所显示数字的这些投票，从它们散布最广的两个方向看过去。彼此靠近的投票，对数字 {answer} 应该长什么样意见一致。</translation>
    </message>
    <message>
        <source>Routing by agreement, iteration 1</source>
        <translation>按一致性路由：第 1 次迭代</translation>
    </message>
    <message>
        <source>Which digit should a primary capsule send its vote to? Routing starts undecided: every coupling coefficient c_ij is 0.1, an even split over the ten digits, and each digit capsule sums the votes it gets. The slider now shows iteration r = 1, where every map is the same.</source>
        <translation>主胶囊该把投票送给哪个数字？路由一开始并不偏向谁：每个耦合系数 c_ij 都是 0.1，在十个数字之间平均分配，每个数字胶囊把收到的投票加起来。滑块现在停在第 r = 1 次迭代，此时每张图都一样。</translation>
    </message>
    <message>
        <source>Agreement moves the couplings</source>
        <translation>一致性改变耦合系数</translation>
    </message>
    <message>
        <source>After each iteration, the logit b_ij grows by the agreement û_j|i · v_j between a vote and the digit&apos;s output, and c_ij = softmax_j(b_ij) follows. At r = {iterations} the maps show where capsules send more than an even split (red) and where less (blue).</source>
        <translation>每次迭代之后，对数几率 b_ij 加上投票与该数字输出之间的一致度 û_j|i · v_j，c_ij = softmax_j(b_ij) 随之改变。在 r = {iterations} 时，图中红色表示胶囊送出的比平均分配多，蓝色表示少。</translation>
    </message>
    <message>
        <source>What routing does here</source>
        <translation>路由在这里做了什么</translation>
    </message>
    <message>
        <source>On this digit, {decisive} of the {primary} primary capsules route decisively (some c_ij moves more than 0.05 away from 0.1); they are ringed on the mosaic and on the input, and carry {share} % of the primary output. The mean entropy of the couplings goes from {entropy_first} to {entropy_last} nats. {answers} {test_set} {spread}</source>
        <translation>在这个数字上，{primary} 个主胶囊中有 {decisive} 个做出了明确的路由选择（某个 c_ij 偏离 0.1 超过 0.05）；它们在拼图和输入上被框了出来，承载了主胶囊输出的 {share} %。耦合系数的平均熵从 {entropy_first} 变到 {entropy_last} 奈特。{answers}{test_set}{spread}</translation>
    </message>
    <message>
        <source>Follow one capsule</source>
        <translation>跟踪一个胶囊</translation>
    </message>
    <message>
        <source>The most decisive capsule of this digit is selected: i = {capsule} (type {type}, at y = {y}, x = {x}, length ‖u_i‖ = {u_length}). It is ringed on the mosaic and among the primary capsule lengths, the input pixels it sees are framed on the map of {answer} on the input, and its vote is circled here among the votes for {answer}. At r = 1 it splits its output evenly, 0.1 to each digit; at r = {iterations} it sends {coupling} to digit {favoured}. Click any primary capsule to follow it the same way, and click it again to let it go.</source>
        <translation>这个数字上最明确路由的胶囊已被选中：i = {capsule}（类型 {type}，位于 y = {y}、x = {x}，长度 ‖u_i‖ = {u_length}）。它在拼图上和主胶囊长度图中被圈出，它所看到的输入像素在“数字 {answer} 的图铺在输入上”中被框出，它的投票在这里 {answer} 的投票中被圈出。在 r = 1 时它把输出平均分给各个数字，每个 0.1；到 r = {iterations} 时它把 {coupling} 送给数字 {favoured}。点击任何一个主胶囊都可以这样跟踪它，再点一次即取消选中。</translation>
    </message>
    <message>
        <source>The margin loss</source>
        <translation>间隔损失</translation>
    </message>
    <message>
        <source>Training pushes the capsule of the right digit above m⁺ = 0.9 and every other one below m⁻ = 0.1, the two dashed lines. A length between them costs loss; the network gets no reward for pushing further, so the bars of a well-trained model stop near the lines.</source>
        <translation>训练把正确数字的胶囊推到 m⁺ = 0.9 以上，把其余胶囊压到 m⁻ = 0.1 以下，也就是那两条虚线。长度落在两线之间就会产生损失；越过虚线再往外推不会得到奖励，所以训练良好的模型，柱子会停在虚线附近。</translation>
    </message>
    <message>
        <source>The decoder and the pose</source>
        <translation>解码器与姿态</translation>
    </message>
    <message>
        <source>A decoder draws the digit again from the answer capsule&apos;s 16 numbers alone. Each slider adds an offset to one dimension; one has just been moved, and the reconstruction changes its stroke while staying a {answer}. The dimensions were never told what to mean: training made them stand for thickness, slant, width and the like.</source>
        <translation>解码器只凭回答胶囊的 16 个数就把数字重新画出来。每个滑块给一个维度加上偏移；刚才移动了其中一个，重构图的笔画随之改变，但仍然是 {answer}。没有人告诉这些维度该表示什么：是训练让它们表示粗细、倾斜、宽窄之类的属性。</translation>
    </message>
    <message>
        <source>Invariance and equivariance</source>
        <translation>不变性与等变性</translation>
    </message>
    <message>
        <source>The input is turned step by step and every angle is classified. While the digit is turned a little, the length of the answer capsule stays high (invariance: the digit is still there) and its pose dimensions move with the angle (equivariance: the pose follows the rotation); turned further, the length falls and the digit is lost. The CNN&apos;s probability along the same sweep can only say how sure it is, not how the digit is turned.</source>
        <translation>输入被一步步旋转，每个角度都分类一次。数字只转一点时，回答胶囊的长度保持在高处（不变性：数字仍然在），姿态维度随角度变化（等变性：姿态跟着旋转）；转得再多，长度就会下降，数字也就认不出来了。沿同一扫描的 CNN 概率只能说它有多确定，说不出数字转了多少。</translation>
    </message>
    <message>
        <source>A CNN beside the capsules</source>
        <translation>胶囊旁边的 CNN</translation>
    </message>
    <message>
        <source>The second bar of each digit is a plain convolutional network&apos;s probability for the same input, trained on the same digits. Both answer {answer} here; the CNN has no lengths, poses or routing to show, only how sure it is.</source>
        <translation>每个数字的第二根柱子是一个普通卷积网络对同一输入给出的概率，它在同样的数字上训练。这里两者都回答 {answer}；CNN 没有长度、姿态或路由可以展示，只有它有多确定。</translation>
    </message>
    <message>
        <source>Overlapping digits</source>
        <translation>重叠数字</translation>
    </message>
    <message>
        <source>Two digits drawn on top of each other: a capsule network trained on such pairs answers with its two longest capsules. The colours show which digit each primary capsule routes to, so routing splits the picture into the two digits, and each is drawn again from its own capsule.</source>
        <translation>两个数字叠在一起：在这种数字对上训练的胶囊网络用最长的两个胶囊来回答。颜色表示每个主胶囊路由到哪个数字，于是路由把图像分成两个数字，每个数字再由它自己的胶囊重新画出来。</translation>
    </message>
    <message>
        <source>One iteration, with the even split alone, already answers {last}, as {iterations} do.</source>
        <translation>只做一次迭代、仅凭平均分配，就已经回答 {last}，与 {iterations} 次迭代相同。</translation>
    </message>
    <message>
        <source>Here routing changes the answer: {first} at r = 1, {last} at r = {iterations}.</source>
        <translation>这里路由改变了回答：r = 1 时是 {first}，r = {iterations} 时是 {last}。</translation>
    </message>
    <message>
        <source>Over the {examples} test images, r = 1 and r = {iterations} answer differently on {differ}.</source>
        <translation>在 {examples} 张测试图像上，r = 1 与 r = {iterations} 的回答有 {differ} 张不同。</translation>
    </message>
    <message>
        <source>(Count on the test set, in the Routing view, tells how often that happens.)</source>
        <translation>（路由视图中的“在测试集上统计”可以告诉你这种情况有多常见。）</translation>
    </message>
    <message>
        <source>On this input routing changes little: most capsules keep nearly the even split.</source>
        <translation>在这个输入上路由改变很小：大多数胶囊几乎保持平均分配。</translation>
    </message>
    <message>
        <source>On this input a good part of the capsules route decisively.</source>
        <translation>在这个输入上相当一部分胶囊做出了明确的路由选择。</translation>
    </message>
    <message>
        <source>test set: other answers at r = 1 than at r = {r} on {k:,} of {n:,} ({a:,} right at r = 1, {b:,} at r = {r})</source>
        <translation>测试集：{n:,} 个样本中有 {k:,} 个在 r = 1 与 r = {r} 时回答不同（r = 1 答对 {a:,} 个，r = {r} 答对 {b:,} 个）</translation>
    </message>
    <message>
        <source>test set: counted for a model saved in a file, while no training runs</source>
        <translation>测试集：只对已保存为文件的模型统计，且不能在训练时进行</translation>
    </message>
    <message>
        <source>test set: counting… {k:,} of {n:,}</source>
        <translation>测试集：正在统计… {k:,} / {n:,}</translation>
    </message>
    <message>
        <source>Cannot count on the test set</source>
        <translation>无法在测试集上统计</translation>
    </message>
    <message>
        <source>test set: counting…</source>
        <translation>测试集：正在统计…</translation>
    </message>
    <message>
        <source>Routing by agreement (Procedure 1 of the paper). Each primary capsule i (1152 on the 6×6 grid of an MNIST model, 3200 on the 10×10 grid of a MultiMNIST model) splits its output among the 10 digit capsules j with coupling coefficients c_ij = softmax_j(b_ij), which sum to 1 over j. All start equal (0.1); after each iteration b_ij grows by the agreement û_j|i · v_j, so a capsule whose prediction agrees with digit j&apos;s output sends more of its vote there.

Class maps: for each digit j, Σ over the 32 capsule types of ‖u_i‖·c_ij at each grid position; with the colour scale &apos;departure from uniform&apos; (the default), Σ ‖u_i‖·(c_ij − 0.1) instead: how much more (red) or less (blue) each position sends to digit j than an even split would. Mosaic: c_ij (or c_ij − 0.1) of every capsule for the selected digit, one tile per type. Overlay: the selected digit&apos;s map of ‖u_i‖·c_ij spread over the input pixels each capsule sees. Hover over a map to read exact values.</source>
        <translation>按一致性路由（论文中的算法 1）。每个主胶囊 i（MNIST 模型在 6×6 网格上有 1152 个，MultiMNIST 模型在 10×10 网格上有 3200 个）用耦合系数 c_ij = softmax_j(b_ij) 把自己的输出分给 10 个数字胶囊 j，这些系数对 j 求和为 1。开始时全都相等（0.1）；每次迭代后 b_ij 加上一致度 û_j|i · v_j，于是预测与数字 j 的输出一致的胶囊，会把更多的票投给它。

类别图：对每个数字 j，在每个网格位置把 32 种胶囊类型的 ‖u_i‖·c_ij 加起来；颜色刻度选“偏离平均分配”（默认）时，改为 Σ ‖u_i‖·(c_ij − 0.1)：每个位置送给数字 j 的，比平均分配多（红）还是少（蓝）。拼图：所选数字上每个胶囊的 c_ij（或 c_ij − 0.1），每种类型一块。叠加图：把所选数字的 ‖u_i‖·c_ij 图铺到每个胶囊所看到的输入像素上。把鼠标停在图上可读出精确数值。</translation>
    </message>
    <message>
        <source>What routing did for this input: the primary capsules whose coupling c_ij to some digit ends more than half an even share (0.05) away from 0.1 route decisively; the rest keep nearly the even split they start with. Their share of Σ‖u_i‖ says how much of the primary output they carry; the mean entropy of c_i falls from ln 10 = 2.3026 nats (even split) as routing decides; r = 1 routes with the even split alone, so its answer is what the network gives without routing by agreement.</source>
        <translation>路由对这个输入做了什么：如果某个主胶囊对某个数字的耦合系数 c_ij 最终偏离 0.1 超过半个平均份额（0.05），就算它做出了明确的路由选择；其余胶囊几乎保持开始时的平均分配。它们占 Σ‖u_i‖ 的比例，表示它们承载了多少主胶囊输出；随着路由做出选择，c_i 的平均熵从 ln 10 = 2.3026 奈特（平均分配）下降；r = 1 只用平均分配来路由，所以它的回答就是网络不做按一致性路由时给出的回答。</translation>
    </message>
    <message>
        <source>scale per iteration</source>
        <translation>每次迭代单独定刻度</translation>
    </message>
    <message>
        <source>scale shared by all iterations</source>
        <translation>所有迭代共用刻度</translation>
    </message>
    <message>
        <source>departure from uniform</source>
        <translation>偏离平均分配</translation>
    </message>
    <message>
        <source>Routing iteration r whose coupling coefficients are shown</source>
        <translation>显示其耦合系数的路由迭代 r</translation>
    </message>
    <message>
        <source>Play</source>
        <translation>播放</translation>
    </message>
    <message>
        <source>Step through the iterations r = 1…R repeatedly</source>
        <translation>反复逐次播放迭代 r = 1…R</translation>
    </message>
    <message>
        <source>Routing iterations R run at inference (the model was trained with 3)</source>
        <translation>推理时运行的路由迭代次数 R（模型训练时用的是 3）</translation>
    </message>
    <message>
        <source>The 16 numbers of a digit capsule&apos;s output vector v_j are its pose: how the digit is drawn (stroke width, slant, scale, local parts). The decoder reconstructs the digit from this vector alone (the other nine capsules are masked to zero). Drag a slider to add an offset to one dimension and watch what it encodes. Column &apos;inferred&apos;: the value the network inferred for this input; column &apos;offset&apos;: the slider and the number added to it. &apos;length ×&apos; scales the whole vector. The Fig. 4 grid moves each dimension from -0.25 to +0.25 in steps of 0.05, as in the paper.</source>
        <translation>数字胶囊输出向量 v_j 的 16 个数就是它的姿态：这个数字是怎样写出来的（笔画粗细、倾斜、大小、局部部件）。解码器只凭这个向量重构数字（其余九个胶囊被屏蔽为零）。拖动滑块给某一维加上偏移，看看这一维编码了什么。“推断值”一列是网络对这个输入推断出的值；“偏移”一列是滑块和加到推断值上的数。“长度 ×”缩放整个向量。图 4 网格把每一维从 -0.25 移到 +0.25，步长 0.05，与论文相同。</translation>
    </message>
    <message>
        <source>Pose perturbations of digit capsule {digit} (paper Fig. 4)</source>
        <translation>数字胶囊 {digit} 的姿态扰动（论文图 4）</translation>
    </message>
    <message>
        <source>rows: dimensions 0–15; columns: offsets {low:+.2f} … {high:+.2f}</source>
        <translation>行：维度 0–15；列：偏移 {low:+.2f} … {high:+.2f}</translation>
    </message>
    <message>
        <source>Save PNG…</source>
        <translation>保存 PNG…</translation>
    </message>
    <message>
        <source>Save grid</source>
        <translation>保存网格</translation>
    </message>
    <message>
        <source>predicted</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>digit {k}</source>
        <translation>数字 {k}</translation>
    </message>
    <message>
        <source>{name} ({k})</source>
        <translation>{name}（{k}）</translation>
    </message>
    <message>
        <source>Which digit capsule&apos;s pose to edit (default: the prediction)</source>
        <translation>编辑哪个数字胶囊的姿态（默认：预测的那个）</translation>
    </message>
    <message>
        <source>Range of the offset sliders</source>
        <translation>偏移滑块的范围</translation>
    </message>
    <message>
        <source>Multiply the whole pose vector (its length) by this factor</source>
        <translation>把整个姿态向量（也就是它的长度）乘以这个倍数</translation>
    </message>
    <message>
        <source>Reset</source>
        <translation>重置</translation>
    </message>
    <message>
        <source>Offsets back to 0 and length × 1</source>
        <translation>偏移归零，长度恢复为 × 1</translation>
    </message>
    <message>
        <source>Fig. 4 grid…</source>
        <translation>图 4 网格…</translation>
    </message>
    <message>
        <source>Reconstructions with each dimension moved from -0.25 to +0.25</source>
        <translation>把每一维从 -0.25 移到 +0.25 得到的重构</translation>
    </message>
    <message>
        <source>the value of each dimension inferred for this input</source>
        <translation>网络为这个输入推断出的各维数值</translation>
    </message>
    <message>
        <source>the offset the slider adds to the inferred value</source>
        <translation>滑块加到推断值上的偏移</translation>
    </message>
    <message>
        <source>inferred</source>
        <translation>推断值</translation>
    </message>
    <message>
        <source>offset</source>
        <translation>偏移</translation>
    </message>
    <message>
        <source>offset added to dimension {k} of the capsule&apos;s 16-D pose</source>
        <translation>加到胶囊 16 维姿态第 {k} 维上的偏移</translation>
    </message>
    <message>
        <source>inferred value of dimension {k}</source>
        <translation>第 {k} 维的推断值</translation>
    </message>
    <message>
        <source>reconstruction</source>
        <translation>重构</translation>
    </message>
    <message>
        <source>reconstruction − input</source>
        <translation>重构 − 输入</translation>
    </message>
    <message>
        <source>capsule</source>
        <translation>胶囊</translation>
    </message>
    <message>
        <source>range</source>
        <translation>范围</translation>
    </message>
    <message>
        <source>length ×</source>
        <translation>长度 ×</translation>
    </message>
    <message>
        <source>reconstruction from capsule {k}</source>
        <translation>由胶囊 {k} 重构</translation>
    </message>
    <message>
        <source>Digit j shown in the mosaic and the overlay (or click a class map)</source>
        <translation>拼图和叠加图中显示的数字 j（也可以点击一张类别图）</translation>
    </message>
    <message>
        <source>Colours of the class maps and the mosaic: Σ ‖u_i‖ c_ij (and c_ij) scaled to this iteration&apos;s values or to all iterations&apos;; or their departure from uniform routing, Σ ‖u_i‖ (c_ij − 0.1) (and c_ij − 0.1), blue below 0, red above, on one scale for all iterations</source>
        <translation>类别图和拼图的颜色：Σ ‖u_i‖ c_ij（以及 c_ij）按本次迭代或所有迭代的数值定刻度；或者显示它们偏离平均路由的程度 Σ ‖u_i‖ (c_ij − 0.1)（以及 c_ij − 0.1），低于 0 为蓝，高于 0 为红，所有迭代共用一个刻度</translation>
    </message>
    <message>
        <source>iteration</source>
        <translation>迭代</translation>
    </message>
    <message>
        <source>Next wrong pair</source>
        <translation>下一个答错的数字对</translation>
    </message>
    <message>
        <source>Next routing change</source>
        <translation>下一个路由改变回答的数字对</translation>
    </message>
    <message>
        <source>Two MNIST test digits of different classes, each shifted by up to 4 px, added and clipped in a 36×36 field (MultiMNIST, Sec. 6 of the paper). The two longest digit capsules are the model&apos;s answer. Fig. 5: the reconstructions from those two capsules in red and green over each other, and one from a digit you pick; a digit that is not there cannot be reconstructed. Segmentation by routing: each pixel coloured by how the primary capsules that see it divide their couplings between digit A (red) and digit B (green), at the routing iteration chosen in the Routing dock.</source>
        <translation>两个不同类别的 MNIST 测试数字，各自最多平移 4 px，相加后在 36×36 的区域内截断（MultiMNIST，论文第 6 节）。最长的两个数字胶囊就是模型的回答。图 5：由这两个胶囊重构出的图像，红绿叠在一起，另外还有一张由你挑选的数字重构出的图像；不在图中的数字无法被重构出来。按路由分割：每个像素的颜色表示看到它的那些主胶囊如何在数字 A（红）和数字 B（绿）之间分配耦合系数，所用的是路由面板中选定的迭代。</translation>
    </message>
    <message>
        <source>test digit</source>
        <translation>测试数字</translation>
    </message>
    <message>
        <source>drawing</source>
        <translation>手绘</translation>
    </message>
    <message>
        <source>take this digit from the MNIST test digits, or draw it</source>
        <translation>从 MNIST 测试数字中取这个数字，或者自己画</translation>
    </message>
    <message>
        <source>Draw a digit with the mouse or a pen. Ctrl+Z undo, Ctrl+Shift+Z redo, Del clear.</source>
        <translation>用鼠标或手写笔写一个数字。Ctrl+Z 撤销，Ctrl+Shift+Z 重做，Del 清除。</translation>
    </message>
    <message>
        <source>model input (28×28)</source>
        <translation>模型输入（28×28）</translation>
    </message>
    <message>
        <source>no digit</source>
        <translation>没有数字</translation>
    </message>
    <message>
        <source>Brush width on the 280 px canvas. The model sees a drawing&apos;s strokes at MNIST&apos;s stroke width whatever the brush</source>
        <translation>280 px 画布上的笔刷宽度。无论笔刷多粗，模型看到的笔画都按 MNIST 的笔画宽度重画</translation>
    </message>
    <message>
        <source>Clear</source>
        <translation>清除</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>撤销</translation>
    </message>
    <message>
        <source>Redo</source>
        <translation>重做</translation>
    </message>
    <message>
        <source>MNIST sample</source>
        <translation>MNIST 样例</translation>
    </message>
    <message>
        <source>Put a random digit of the MNIST test sample on the canvas</source>
        <translation>从 MNIST 测试样本中随机取一个数字放到画布上</translation>
    </message>
    <message>
        <source>Open image…</source>
        <translation>打开图像…</translation>
    </message>
    <message>
        <source>Classify an image file (or drop one on the window, or paste with Ctrl+V)</source>
        <translation>对一个图像文件分类（也可以把文件拖到窗口上，或按 Ctrl+V 粘贴）</translation>
    </message>
    <message>
        <source>ink: auto</source>
        <translation>墨迹：自动</translation>
    </message>
    <message>
        <source>ink: light on dark</source>
        <translation>墨迹：深底浅字</translation>
    </message>
    <message>
        <source>ink: dark on light</source>
        <translation>墨迹：浅底深字</translation>
    </message>
    <message>
        <source>How image files are read: auto-detects dark ink on light paper from the image border; choose to override</source>
        <translation>怎样读取图像文件：默认根据图像边缘自动判断是不是浅色纸上的深色墨迹；也可以在这里指定</translation>
    </message>
    <message>
        <source>brush</source>
        <translation>笔刷</translation>
    </message>
    <message>
        <source>prediction</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>Draw a digit with the mouse: it is classified while you draw.</source>
        <translation>用鼠标写一个数字：边写边分类。</translation>
    </message>
    <message>
        <source>The exact 28×28 input the network sees: the ink cropped, fitted into 20×20 and centred by its centre of mass, as MNIST was made; a drawing&apos;s strokes drawn at MNIST&apos;s stroke width</source>
        <translation>网络看到的确切的 28×28 输入：墨迹经过裁剪，缩放到 20×20 以内，再按质心居中，与 MNIST 的制作方法相同；手写的笔画按 MNIST 的笔画宽度重画</translation>
    </message>
    <message>
        <source>The digit capsule with the longest vector; its length ‖v_j‖ in brackets</source>
        <translation>向量最长的数字胶囊；括号里是它的长度 ‖v_j‖</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;font-size: 13pt;&apos;&gt;nothing recognised&lt;/span&gt;&lt;br&gt;&lt;span style=&apos;font-size: 10pt; font-weight: normal;&apos;&gt;longest: {digit} ({length:.2f} &amp;lt; {threshold:.1f})&lt;/span&gt;</source>
        <translation>&lt;span style=&apos;font-size: 13pt;&apos;&gt;没有认出数字&lt;/span&gt;&lt;br&gt;&lt;span style=&apos;font-size: 10pt; font-weight: normal;&apos;&gt;最长：{digit}（{length:.2f} &amp;lt; {threshold:.1f}）&lt;/span&gt;</translation>
    </message>
    <message>
        <source>index of the digit in the MNIST test digits</source>
        <translation>该数字在 MNIST 测试数字中的序号</translation>
    </message>
    <message>
        <source>Browse the MNIST test digits (the full test set when MNIST is installed, else the 2,000-digit sample shipped in assets/). Each digit goes to the input exactly as stored. Once the model has read them all, &apos;only mistakes&apos; keeps the misclassified digits, and the confusion matrix counts true digit (row) against prediction (column): click a cell to browse its digits. With a CNN to compare, each digit also shows the CNN&apos;s answer, and &apos;only where the CNN disagrees&apos; keeps the digits on which the two networks differ.</source>
        <translation>浏览 MNIST 测试数字（装有 MNIST 时是完整的测试集，否则是随附的 2,000 个数字的样本）。每个数字按原样送作输入。模型读完全部数字后，“只看错误”只留下分错的数字；混淆矩阵按真实数字（行）和预测（列）计数：点击一个格子就能浏览其中的数字。有对照 CNN 时，每个数字还会显示 CNN 的回答，“只看与 CNN 不一致的”只留下两个网络回答不同的数字。</translation>
    </message>
    <message>
        <source>no test data loaded</source>
        <translation>还没有载入测试数据</translation>
    </message>
    <message>
        <source>◀ Previous</source>
        <translation>◀ 上一个</translation>
    </message>
    <message>
        <source>Next ▶</source>
        <translation>下一个 ▶</translation>
    </message>
    <message>
        <source>Random</source>
        <translation>随机</translation>
    </message>
    <message>
        <source>index </source>
        <translation>序号 </translation>
    </message>
    <message>
        <source>{line} (not the input)</source>
        <translation>{line}（不是当前输入）</translation>
    </message>
    <message>
        <source>Go to a test image by its index</source>
        <translation>按序号跳到一张测试图像</translation>
    </message>
    <message>
        <source>only mistakes</source>
        <translation>只看错误</translation>
    </message>
    <message>
        <source>only where the CNN disagrees</source>
        <translation>只看与 CNN 不一致的</translation>
    </message>
    <message>
        <source>Keep the digits on which the CapsNet and the compared CNN give different answers</source>
        <translation>只留下 CapsNet 与对照 CNN 回答不同的数字</translation>
    </message>
    <message>
        <source>Show all</source>
        <translation>显示全部</translation>
    </message>
    <message>
        <source>Rows: true digit; columns: predicted digit. Click a cell to browse its digits.</source>
        <translation>行：真实数字；列：预测的数字。点击一个格子可浏览其中的数字。</translation>
    </message>
    <message>
        <source>confusion matrix (rows: true digit, columns: prediction)</source>
        <translation>混淆矩阵（行：真实数字，列：预测）</translation>
    </message>
    <message>
        <source>{description}: {n:,} digits</source>
        <translation>{description}：{n:,} 个数字</translation>
    </message>
    <message>
        <source>true {true}, predicted {predicted}</source>
        <translation>真实 {true}，预测 {predicted}</translation>
    </message>
    <message>
        <source>mistakes only</source>
        <translation>只看错误</translation>
    </message>
    <message>
        <source>CNN disagrees</source>
        <translation>与 CNN 不一致</translation>
    </message>
    <message>
        <source>browsing {n:,} digits ({filters})</source>
        <translation>正在浏览 {n:,} 个数字（{filters}）</translation>
    </message>
    <message>
        <source>; </source>
        <translation>；</translation>
    </message>
    <message>
        <source>browsing all digits</source>
        <translation>正在浏览全部数字</translation>
    </message>
    <message>
        <source>test image {index}: label {label}</source>
        <translation>测试图像 {index}：标签 {label}</translation>
    </message>
    <message>
        <source>test image {index}: label {label}, predicted {predicted}{wrong}</source>
        <translation>测试图像 {index}：标签 {label}，预测 {predicted}{wrong}</translation>
    </message>
    <message>
        <source>test image {index}: label {label}, predicted {predicted}{wrong}; CNN {cnn}{cnn_wrong}</source>
        <translation>测试图像 {index}：标签 {label}，预测 {predicted}{wrong}；CNN {cnn}{cnn_wrong}</translation>
    </message>
    <message>
        <source>a random test digit of another class than the other digit</source>
        <translation>随机取一个与另一个数字类别不同的测试数字</translation>
    </message>
    <message>
        <source>digit</source>
        <translation>数字</translation>
    </message>
    <message>
        <source>shift ↓</source>
        <translation>下移 ↓</translation>
    </message>
    <message>
        <source>shift →</source>
        <translation>右移 →</translation>
    </message>
    <message>
        <source>rows / columns to move the digit by, −{k}…{k} px</source>
        <translation>数字移动的行数 / 列数，−{k}…{k} px</translation>
    </message>
    <message>
        <source>digit A (red)</source>
        <translation>数字 A（红）</translation>
    </message>
    <message>
        <source>digit B (green)</source>
        <translation>数字 B（绿）</translation>
    </message>
    <message>
        <source>R = 1: routing runs once, so no answer can change; raise R to find where it does</source>
        <translation>R = 1：路由只运行一次，答案不会改变；调高 R 才能找到路由改变答案的地方</translation>
    </message>
    <message>
        <source>The segmentation&apos;s colours span the largest departure from an even split over all iterations of this pair: where routing barely divides the capsules, faint differences show as full colours. The shares are the couplings themselves.</source>
        <translation>分割图的颜色范围取这一对数字在所有迭代中偏离平均分配的最大值：路由几乎没有把胶囊分开的地方，细微的差别也会显示成饱和的颜色。份额本身就是耦合系数。</translation>
    </message>
    <message>
        <source>reconstruct from this digit&apos;s capsule (the paper&apos;s (*) columns)</source>
        <translation>由这个数字的胶囊重构（论文中标 (*) 的列）</translation>
    </message>
    <message>
        <source>a pair of the fixed MultiMNIST test set: its digits and shifts</source>
        <translation>固定的 MultiMNIST 测试集中的一对：它的两个数字和平移量</translation>
    </message>
    <message>
        <source>Show test pair</source>
        <translation>显示测试数字对</translation>
    </message>
    <message>
        <source>scan the test pairs after this one for the next whose two longest capsules are not its two digits (click again to cancel)</source>
        <translation>从这一对往后查找下一个最长两个胶囊不是它那两个数字的测试数字对（再点一次取消）</translation>
    </message>
    <message>
        <source>scan the test pairs after this one for the next whose two longest capsules after one routing iteration are other digits than after R (the Routing dock&apos;s R; click again to cancel)</source>
        <translation>从这一对往后查找下一个在一次路由迭代后与 R 次迭代后最长两个胶囊不同的测试数字对（R 取路由面板中的值；再点一次取消）</translation>
    </message>
    <message>
        <source>the test pairs need the MNIST test files (File → Download MNIST…)</source>
        <translation>测试数字对需要 MNIST 测试文件（文件 → 下载 MNIST…）</translation>
    </message>
    <message>
        <source>input</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>decoded</source>
        <translation>解码</translation>
    </message>
    <message>
        <source>(*) digit</source>
        <translation>(*) 数字</translation>
    </message>
    <message>
        <source>segmentation</source>
        <translation>分割</translation>
    </message>
    <message>
        <source>the two digits, each alone in its shifted 36×36 field: A in red, B in green</source>
        <translation>两个数字，各自单独放在平移后的 36×36 区域中：A 为红，B 为绿</translation>
    </message>
    <message>
        <source>the model&apos;s {k}×{k} input: the two digits summed and clipped at 1</source>
        <translation>模型的 {k}×{k} 输入：两个数字相加并在 1 处截断</translation>
    </message>
    <message>
        <source>the reconstructions from the two longest capsules over each other (paper Fig. 5)</source>
        <translation>由最长两个胶囊重构出的图像叠在一起（论文图 5）</translation>
    </message>
    <message>
        <source>the reconstruction from the capsule picked under (*): a digit that is not there</source>
        <translation>由 (*) 下所选胶囊重构出的图像：一个不在图中的数字</translation>
    </message>
    <message>
        <source>segmentation by routing at iteration r: each pixel coloured by how the primary capsules that see it split their couplings between the two digits (red: to A&apos;s capsule, green: to B&apos;s)</source>
        <translation>第 r 次迭代时按路由分割：每个像素的颜色表示看到它的主胶囊如何在两个数字之间分配耦合系数（红：送给 A 的胶囊，绿：送给 B 的）</translation>
    </message>
    <message>
        <source>(*) reconstruct digit</source>
        <translation>(*) 重构数字</translation>
    </message>
    <message>
        <source>test pair</source>
        <translation>测试数字对</translation>
    </message>
    <message>
        <source>test pair {k}: digits {a} and {b}</source>
        <translation>测试数字对 {k}：数字 {a} 和 {b}</translation>
    </message>
    <message>
        <source>{name}: {digit}</source>
        <translation>{name}：{digit}</translation>
    </message>
    <message>
        <source>Cancel scan</source>
        <translation>取消查找</translation>
    </message>
    <message>
        <source>scanning the test pairs: {k:,} / {n:,}</source>
        <translation>正在查找测试数字对：{k:,} / {n:,}</translation>
    </message>
    <message>
        <source>no wrong pair after test pair {k}</source>
        <translation>测试数字对 {k} 之后没有答错的</translation>
    </message>
    <message>
        <source>no pair where routing changes the answer after test pair {k}</source>
        <translation>测试数字对 {k} 之后没有路由改变回答的</translation>
    </message>
    <message>
        <source>decoded {a}, {b}</source>
        <translation>解码 {a}、{b}</translation>
    </message>
    <message>
        <source>decoded {a}</source>
        <translation>解码 {a}</translation>
    </message>
    <message>
        <source>decoded: none</source>
        <translation>解码：无</translation>
    </message>
    <message>
        <source>(*) {k} absent</source>
        <translation>(*) {k} 不在图中</translation>
    </message>
    <message>
        <source>colours: full red at a share to {a} of {red:.4f}, full green at {green:.4f} (0.5: even)</source>
        <translation>颜色：送给 {a} 的份额为 {red:.4f} 时全红，为 {green:.4f} 时全绿（0.5：平分）</translation>
    </message>
    <message>
        <source>class maps</source>
        <translation>类别图</translation>
    </message>
    <message>
        <source>c_ij by capsule type</source>
        <translation>按胶囊类型排列的 c_ij</translation>
    </message>
    <message>
        <source>c_ij of every primary capsule i for the selected digit j: one G × G tile per capsule type, 4 rows of 8 types (type 0 top left). Click a capsule to select it: it is ringed here, in the primary capsule lengths and among the votes, with its receptive field on the input (click it again to let it go)</source>
        <translation>每个主胶囊 i 对所选数字 j 的 c_ij：每种胶囊类型一块 G × G 的方块，共 4 行、每行 8 种（类型 0 在左上）。点击一个胶囊即选中它：它在这里、在主胶囊长度图中和投票中都会被圈出，它在输入上的感受野也会被框出（再点一次取消选中）</translation>
    </message>
    <message>
        <source>map over the input</source>
        <translation>铺在输入上的图</translation>
    </message>
    <message>
        <source>map of {j} on the input</source>
        <translation>数字 {j} 的图铺在输入上</translation>
    </message>
    <message>
        <source>Length ‖v_j‖ of each digit capsule after the last routing iteration: the network&apos;s estimate that digit j is present; the longest (MultiMNIST: the two longest) in orange. Training pushes the true class above m⁺ = 0.9 and all others below m⁻ = 0.1 (margin loss, Eq. 4). The middle plot shows how each length changes from one routing iteration to the next. Below: the lengths ‖u_i‖ of the primary capsules, one map per capsule type (32 types; 6×6 positions for MNIST, 10×10 for MultiMNIST): which local features fired. Click one to select that primary capsule in every view (click it again to let it go).

With a CNN to compare (the shipped baseline, or one trained in the Training panel), its class probabilities stand to the right of each capsule&apos;s bar (purple; its answer, or two answers, in red): a softmax over the ten digits (MultiMNIST: ten independent sigmoids).</source>
        <translation>最后一次路由迭代之后各数字胶囊的长度 ‖v_j‖：网络对数字 j 存在的估计；最长的那个（MultiMNIST：最长的两个）显示为橙色。训练把真实类别推到 m⁺ = 0.9 以上，把其余类别压到 m⁻ = 0.1 以下（间隔损失，式 4）。中间的图显示每个长度在一次次路由迭代中怎样变化。下方是主胶囊的长度 ‖u_i‖，每种胶囊类型一张图（32 种类型；MNIST 为 6×6 个位置，MultiMNIST 为 10×10 个）：哪些局部特征被激活了。点击其中一个，即在每个视图中选中这个主胶囊（再点一次取消选中）。

有对照 CNN 时（随附的对照模型，或在训练面板里训练的），它的类别概率画在每个胶囊柱子的右边（紫色；它的回答，一个或两个，显示为红色）：对十个数字做 softmax（MultiMNIST：十个相互独立的 S 型函数）。</translation>
    </message>
    <message>
        <source>capsule lengths ‖v_j‖</source>
        <translation>胶囊长度 ‖v_j‖</translation>
    </message>
    <message>
        <source>digit j:</source>
        <translation>数字 j：</translation>
    </message>
    <message>
        <source>iteration r</source>
        <translation>迭代 r</translation>
    </message>
    <message>
        <source>length ‖v_j‖ per routing iteration</source>
        <translation>每次路由迭代后的长度 ‖v_j‖</translation>
    </message>
    <message>
        <source>capsule ‖v_j‖</source>
        <translation>胶囊 ‖v_j‖</translation>
    </message>
    <message>
        <source>lengths ‖v_j‖ · CNN p(j)</source>
        <translation>长度 ‖v_j‖ · CNN p(j)</translation>
    </message>
    <message>
        <source>primary capsule lengths ‖u_i‖&lt;br&gt;32 types × {grid}×{grid}</source>
        <translation>主胶囊长度 ‖u_i‖&lt;br&gt;32 种类型 × {grid}×{grid}</translation>
    </message>
    <message>
        <source>capsule i={i} (type {t}, y={y}, x={x})&lt;br&gt;‖u_i‖ = {length:.4f}</source>
        <translation>胶囊 i={i}（类型 {t}，y={y}，x={x}）&lt;br&gt;‖u_i‖ = {length:.4f}</translation>
    </message>
    <message>
        <source>Σ_i ‖u_i‖ c_ij: how much of the primary capsules&apos; output each digit receives</source>
        <translation>Σ_i ‖u_i‖ c_ij：每个数字收到了多少主胶囊的输出</translation>
    </message>
    <message>
        <source>routed mass per digit</source>
        <translation>每个数字收到的路由量</translation>
    </message>
    <message>
        <source>mean entropy of c_i</source>
        <translation>c_i 的平均熵</translation>
    </message>
    <message>
        <source>Mean over the primary capsules of -Σ_j c_ij ln c_ij, in nats; ln 10 = 2.303 when every capsule splits its vote evenly</source>
        <translation>所有主胶囊上 -Σ_j c_ij ln c_ij 的平均值，单位为奈特；每个胶囊都平均分配投票时为 ln 10 = 2.303</translation>
    </message>
    <message>
        <source>uniform</source>
        <translation>平均分配</translation>
    </message>
    <message>
        <source>hover over a map to read its values</source>
        <translation>把鼠标停在图上读出数值</translation>
    </message>
    <message>
        <source>mark decisive</source>
        <translation>标出明确路由的胶囊</translation>
    </message>
    <message>
        <source>Ring the {k} capsules that route most decisively on the mosaic, and their receptive fields on the input</source>
        <translation>在拼图上框出路由选择最明确的 {k} 个胶囊，并在输入上框出它们的感受野</translation>
    </message>
    <message>
        <source>count on the test set</source>
        <translation>在测试集上统计</translation>
    </message>
    <message>
        <source>How often one routing iteration (the even split) answers other than R</source>
        <translation>只做一次路由迭代（平均分配）时，回答与 R 次迭代不同的情况有多常见</translation>
    </message>
    <message>
        <source>c_i{j} over the iterations: {path}; the most, {top:.3f}, to digit {k}</source>
        <translation>c_i{j} 在各次迭代中：{path}；最多的 {top:.3f} 送给数字 {k}</translation>
    </message>
    <message>
        <source>class maps {quantity}</source>
        <translation>类别图 {quantity}</translation>
    </message>
    <message>
        <source>every c_ij is 0.1 (uniform), so every map is 0</source>
        <translation>每个 c_ij 都是 0.1（平均分配），所以每张图都是 0</translation>
    </message>
    <message>
        <source>every c_ij is 0.1 (uniform), so the ten maps are the same</source>
        <translation>每个 c_ij 都是 0.1（平均分配），所以十张图完全相同</translation>
    </message>
    <message>
        <source>red: more than an even split (0.1) sends, blue: less</source>
        <translation>红：送出的比平均分配（0.1）多；蓝：少</translation>
    </message>
    <message>
        <source>colours from all iterations&apos; values</source>
        <translation>颜色取自所有迭代的数值</translation>
    </message>
    <message>
        <source>colours from this iteration&apos;s values</source>
        <translation>颜色取自本次迭代的数值</translation>
    </message>
    <message>
        <source>class maps {quantity}, iteration {r}</source>
        <translation>类别图 {quantity}，第 {r} 次迭代</translation>
    </message>
    <message>
        <source>not read as {k} at the value set</source>
        <translation>在当前设定值处不读作 {k}</translation>
    </message>
    <message>
        <source>read as {k} over the whole sweep</source>
        <translation>整个扫描范围内都读作 {k}</translation>
    </message>
    <message>
        <source>read as {k} from {low} to {high}</source>
        <translation>从 {low} 到 {high} 读作 {k}</translation>
    </message>
    <message>
        <source>r = {r} of {n}</source>
        <translation>r = {r}（共 {n}）</translation>
    </message>
    <message>
        <source>&lt;b&gt;what routing does here&lt;/b&gt;</source>
        <translation>&lt;b&gt;路由在这里做了什么&lt;/b&gt;</translation>
    </message>
    <message>
        <source>no input</source>
        <translation>没有输入</translation>
    </message>
    <message>
        <source>decisive: {k:,} of {n:,}</source>
        <translation>明确路由：{k:,} / {n:,}</translation>
    </message>
    <message>
        <source>(|c_ij − 0.1| &gt; {t:.2f} at r = {r})</source>
        <translation>（r = {r} 时 |c_ij − 0.1| &gt; {t:.2f}）</translation>
    </message>
    <message>
        <source>share of Σ‖u_i‖: {share:.1f} %</source>
        <translation>占 Σ‖u_i‖ 的 {share:.1f} %</translation>
    </message>
    <message>
        <source>entropy {a:.4f} → {b:.4f}</source>
        <translation>熵 {a:.4f} → {b:.4f}</translation>
    </message>
    <message>
        <source>answer {first} (r = 1)</source>
        <translation>回答 {first}（r = 1）</translation>
    </message>
    <message>
        <source>one routing iteration: raise R to compare</source>
        <translation>只有一次路由迭代：增大 R 才能比较</translation>
    </message>
    <message>
        <source>answer {first} (r = 1), {last} (r = {r})</source>
        <translation>回答 {first}（r = 1），{last}（r = {r}）</translation>
    </message>
    <message>
        <source>routing changes the answer</source>
        <translation>路由改变了回答</translation>
    </message>
    <message>
        <source>routing keeps the answer</source>
        <translation>路由没有改变回答</translation>
    </message>
    <message>
        <source>c_i{j}{minus} of {n:,} capsules, r = {r}</source>
        <translation>{n:,} 个胶囊的 c_i{j}{minus}，r = {r}</translation>
    </message>
    <message>
        <source>digit {j}, grid y={y} x={x}, iteration {r}: Σ_type ‖u_i‖ c_ij = {mass:.4f}, Σ_type ‖u_i‖ (c_ij − 0.1) = {departure:+.4f}</source>
        <translation>数字 {j}，网格 y={y} x={x}，第 {r} 次迭代：Σ_type ‖u_i‖ c_ij = {mass:.4f}，Σ_type ‖u_i‖ (c_ij − 0.1) = {departure:+.4f}</translation>
    </message>
    <message>
        <source>capsule i={i} (type {t}, y={y}, x={x}): ‖u_i‖ = {u:.4f}, c_i{j} = {c:.4f}, b_i{j} = {b:.4f} at iteration {r}</source>
        <translation>胶囊 i={i}（类型 {t}，y={y}，x={x}）：‖u_i‖ = {u:.4f}，第 {r} 次迭代时 c_i{j} = {c:.4f}，b_i{j} = {b:.4f}</translation>
    </message>
    <message>
        <source>rotate</source>
        <translation>旋转</translation>
    </message>
    <message>
        <source>scale</source>
        <translation>缩放</translation>
    </message>
    <message>
        <source>move x</source>
        <translation>平移 x</translation>
    </message>
    <message>
        <source>move y</source>
        <translation>平移 y</translation>
    </message>
    <message>
        <source>shear</source>
        <translation>错切</translation>
    </message>
    <message>
        <source>stroke</source>
        <translation>笔画</translation>
    </message>
    <message>
        <source>Transform the input and watch the capsules respond. Capsules aim at equivariance: when the digit turns, moves or gets bolder, some of the 16 pose dimensions of its digit capsule should change smoothly with it, while the capsule&apos;s length (the probability that the digit is there) stays about the same — invariance of the classification, equivariance of the pose.

The plot sweeps one transform over its range (the others stay as set) and shows the chosen capsule&apos;s 16 pose dimensions (thin lines) and its length (thick white line); with a CNN to compare, the CNN&apos;s probability of the same digit along the same sweep (dashed purple line).</source>
        <translation>变换输入，看胶囊怎样响应。胶囊追求的是等变性：数字旋转、移动或笔画变粗时，它的数字胶囊的 16 个姿态维度里应当有一些随之平滑变化，而胶囊的长度（这个数字存在的概率）大致不变——分类是不变的，姿态是等变的。

图中让一种变换扫过它的整个范围（其他变换保持当前设置），画出所选胶囊的 16 个姿态维度（细线）和它的长度（白色粗线）；有对照 CNN 时，还画出 CNN 在同一扫描中对同一数字给出的概率（紫色虚线）。</translation>
    </message>
    <message>
        <source>{label} ({unit})</source>
        <translation>{label}（{unit}）</translation>
    </message>
    <message>
        <source>The transform swept along the plot&apos;s x axis</source>
        <translation>沿图的 x 轴扫描的变换</translation>
    </message>
    <message>
        <source>The digit capsule whose pose is plotted</source>
        <translation>画出哪个数字胶囊的姿态</translation>
    </message>
    <message>
        <source>pose of the capsule along the sweep</source>
        <translation>扫描中胶囊的姿态</translation>
    </message>
    <message>
        <source>pose, length</source>
        <translation>姿态、长度</translation>
    </message>
    <message>
        <source>a digit counts as recognised where its capsule is the longest and at least this long</source>
        <translation>某个数字的胶囊最长且至少这么长时，才算识别出该数字</translation>
    </message>
    <message>
        <source>sweep</source>
        <translation>扫描</translation>
    </message>
    <message>
        <source>the 16 dimensions of v_{k}</source>
        <translation>v_{k} 的 16 个维度</translation>
    </message>
    <message>
        <source>length ‖v_{k}‖</source>
        <translation>长度 ‖v_{k}‖</translation>
    </message>
    <message>
        <source>capsule {k} along &apos;{label}&apos;</source>
        <translation>胶囊 {k} 随“{label}”的变化</translation>
    </message>
    <message>
        <source>length {low:.2f}–{high:.2f} over the sweep; the dimensions that move most: d{d0} (range {range0:.2f}), d{d1} (range {range1:.2f}), d{d2} (range {range2:.2f})</source>
        <translation>扫描中长度为 {low:.2f}–{high:.2f}；变化最大的维度：d{d0}（幅度 {range0:.2f}）、d{d1}（幅度 {range1:.2f}）、d{d2}（幅度 {range2:.2f}）</translation>
    </message>
    <message>
        <source>length {low:.2f}–{high:.2f} over the sweep; CNN p({k}) {cnn_low:.2f}–{cnn_high:.2f}; the dimensions that move most: d{d0} (range {range0:.2f}), d{d1} (range {range1:.2f}), d{d2} (range {range2:.2f})</source>
        <translation>扫描中长度为 {low:.2f}–{high:.2f}；CNN p({k}) 为 {cnn_low:.2f}–{cnn_high:.2f}；变化最大的维度：d{d0}（幅度 {range0:.2f}）、d{d1}（幅度 {range1:.2f}）、d{d2}（幅度 {range2:.2f}）</translation>
    </message>
    <message>
        <source>an {k}</source>
        <translation>{k}</translation>
    </message>
    <message>
        <source>a {k}</source>
        <translation>{k}</translation>
    </message>
    <message>
        <source>longest capsules: {j} and {k}</source>
        <translation>最长的胶囊：{j} 和 {k}</translation>
    </message>
    <message>
        <source>; the test digit is {digit} — found</source>
        <translation>；测试数字是 {digit}——找到了</translation>
    </message>
    <message>
        <source>both digits are blank: draw a digit or pick a test digit</source>
        <translation>两个数字都是空白：请画一个数字或选一个测试数字</translation>
    </message>
    <message>
        <source>digit A is blank, so the input is one digit; longest capsule: {j}</source>
        <translation>数字 A 是空白，输入只有一个数字；最长的胶囊：{j}</translation>
    </message>
    <message>
        <source>digit B is blank, so the input is one digit; longest capsule: {j}</source>
        <translation>数字 B 是空白，输入只有一个数字；最长的胶囊：{j}</translation>
    </message>
    <message>
        <source>; the test digit is {digit} — not found</source>
        <translation>；测试数字是 {digit}——没有找到</translation>
    </message>
    <message>
        <source>both digits are {a}s: pick digits of two different classes</source>
        <translation>两个数字都是 {a}：请选两个不同类别的数字</translation>
    </message>
    <message>
        <source>; the digits are {a} and {b} — both right</source>
        <translation>；数字是 {a} 和 {b}——两个都对</translation>
    </message>
    <message>
        <source>; the digits are {a} and {b} — one right</source>
        <translation>；数字是 {a} 和 {b}——对了一个</translation>
    </message>
    <message>
        <source>; the digits are {a} and {b} — both wrong</source>
        <translation>；数字是 {a} 和 {b}——两个都错</translation>
    </message>
    <message>
        <source>r = 1: {j} (one routing iteration: raise R to compare)</source>
        <translation>r = 1：{j}（只有一次路由迭代：增大 R 才能比较）</translation>
    </message>
    <message>
        <source>r = 1: {j}, {k} (one routing iteration: raise R to compare)</source>
        <translation>r = 1：{j}、{k}（只有一次路由迭代：增大 R 才能比较）</translation>
    </message>
    <message>
        <source>none right</source>
        <translation>都不对</translation>
    </message>
    <message>
        <source>one right</source>
        <translation>对一个</translation>
    </message>
    <message>
        <source>both right</source>
        <translation>两个都对</translation>
    </message>
    <message>
        <source>wrong</source>
        <translation>错</translation>
    </message>
    <message>
        <source>right</source>
        <translation>对</translation>
    </message>
    <message>
        <source> ({found})</source>
        <translation>（{found}）</translation>
    </message>
    <message>
        <source>r = 1: {first} · r = {r}: {last} — routing kept the answer</source>
        <translation>r = 1：{first} · r = {r}：{last}——路由没有改变回答</translation>
    </message>
    <message>
        <source>r = 1: {first} · r = {r}: {last} — routing changed the answer</source>
        <translation>r = 1：{first} · r = {r}：{last}——路由改变了回答</translation>
    </message>
    <message>
        <source>MNIST test set</source>
        <translation>MNIST 测试集</translation>
    </message>
    <message>
        <source>assets sample</source>
        <translation>随附样本</translation>
    </message>
    <message>
        <source>untrained</source>
        <translation>未训练</translation>
    </message>
    <message>
        <source>untrained (the shipped model is missing)</source>
        <translation>未训练（随附的模型缺失）</translation>
    </message>
    <message>
        <source>No model</source>
        <translation>没有模型</translation>
    </message>
    <message>
        <source>The shipped model cannot be loaded: {error}

The views show an untrained model. Open a checkpoint (File → Open checkpoint…) or train one in the Training panel.</source>
        <translation>无法载入随附的模型：{error}

各视图显示的是未训练的模型。请打开一个检查点（文件 → 打开检查点…），或在训练面板中训练一个。</translation>
    </message>
    <message>
        <source>Cannot load checkpoint</source>
        <translation>无法载入检查点</translation>
    </message>
    <message>
        <source>{error}

The shipped model is shown instead.</source>
        <translation>{error}

改为显示随附的模型。</translation>
    </message>
    <message>
        <source>{error}

The current model stays loaded.</source>
        <translation>{error}

当前模型保持不变。</translation>
    </message>
    <message>
        <source>{name} — {summary}</source>
        <translation>{name}——{summary}</translation>
    </message>
    <message>
        <source>Training is running</source>
        <translation>训练正在进行</translation>
    </message>
    <message>
        <source>Stop the training run (Training panel) before opening another model: the run&apos;s weights are shown.</source>
        <translation>请先停止训练（训练面板），再打开其他模型：当前显示的是训练中的权重。</translation>
    </message>
    <message>
        <source>A model is loading</source>
        <translation>模型正在载入</translation>
    </message>
    <message>
        <source>Stop the training run (Training panel) before switching to other models.</source>
        <translation>请先停止训练（训练面板），再切换到其他模型。</translation>
    </message>
    <message>
        <source>Wait until the model being loaded is in.</source>
        <translation>请等正在载入的模型载入完成。</translation>
    </message>
    <message>
        <source>loading {name}…</source>
        <translation>正在载入 {name}…</translation>
    </message>
    <message>
        <source>loading the shipped model…</source>
        <translation>正在载入随附的模型…</translation>
    </message>
    <message>
        <source>untrained (the model cannot be loaded)</source>
        <translation>未训练（模型无法载入）</translation>
    </message>
    <message>
        <source>Cannot load the CNN</source>
        <translation>无法载入 CNN</translation>
    </message>
    <message>
        <source>{error}

The current comparison stays.</source>
        <translation>{error}

当前的对照保持不变。</translation>
    </message>
    <message>
        <source>Cannot save checkpoint</source>
        <translation>无法保存检查点</translation>
    </message>
    <message>
        <source>{path}: {reason}</source>
        <translation>{path}：{reason}</translation>
    </message>
    <message>
        <source>Cannot compute the transform sweep</source>
        <translation>无法计算变换扫描</translation>
    </message>
    <message>
        <source>Cannot reconstruct the test examples</source>
        <translation>无法重构测试样本</translation>
    </message>
    <message>
        <source>Cannot classify the input</source>
        <translation>无法对输入分类</translation>
    </message>
    <message>
        <source>Cannot run the CNN on the input</source>
        <translation>无法在输入上运行 CNN</translation>
    </message>
    <message>
        <source>Cannot read the input</source>
        <translation>无法读取输入</translation>
    </message>
    <message>
        <source>Cannot train</source>
        <translation>无法训练</translation>
    </message>
    <message>
        <source>training from scratch</source>
        <translation>从头开始训练</translation>
    </message>
    <message>
        <source>trained here from {origin} — {summary}</source>
        <translation>从 {origin} 起在这里训练——{summary}</translation>
    </message>
    <message>
        <source>trained here — {summary}</source>
        <translation>在这里训练——{summary}</translation>
    </message>
    <message>
        <source>Training failed</source>
        <translation>训练失败</translation>
    </message>
    <message>
        <source>How far the model&apos;s recognition carries beyond the poses MNIST shows: accuracy on the first N MNIST test digits, each rotated, scaled, sheared or moved by +s or −s (a seeded choice per digit) for growing strengths s, and on an affine-transformed test set in which every digit has its own random warp (rotation ±{rot:g}°, scale {s0:g}–{s1:g}, shear ±{sh:g}°, ±{move:g} px each way). The same figures as `capsviz robustness`. Strength 0 is the plain test set. With a CNN to compare, its curves are drawn too (purple, dashed): the paper&apos;s claim is that capsules carry further (affNIST: 79 % against 66 % for a CNN of the same MNIST accuracy).</source>
        <translation>模型的识别能力能延伸到 MNIST 所见姿态之外多远：在前 N 个 MNIST 测试数字上的准确率，强度 s 逐步增大，每个数字旋转、缩放、错切或平移 +s 或 −s（每个数字取哪个方向由固定的随机种子决定）；以及在一个仿射变换测试集上的准确率，其中每个数字都有自己的随机变形（旋转 ±{rot:g}°，缩放 {s0:g}–{s1:g}，错切 ±{sh:g}°，各方向平移 ±{move:g} px）。结果与命令行的鲁棒性测量相同。强度 0 就是原始测试集。有对照 CNN 时也画出它的曲线（紫色虚线）：论文认为胶囊能延伸得更远（在论文的仿射变换测试集上为 79 %，而 MNIST 准确率相同的 CNN 只有 66 %）。</translation>
    </message>
    <message>
        <source>rotation</source>
        <translation>旋转</translation>
    </message>
    <message>
        <source>translation</source>
        <translation>平移</translation>
    </message>
    <message>
        <source>scale s</source>
        <translation>缩放 s</translation>
    </message>
    <message>
        <source>Measure on the first N MNIST test digits (10,000: the whole test set)</source>
        <translation>在前 N 个 MNIST 测试数字上测量（10,000：整个测试集）</translation>
    </message>
    <message>
        <source>Measure</source>
        <translation>测量</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>not measured for this model</source>
        <translation>这个模型还没有测量</translation>
    </message>
    <message>
        <source>test digits</source>
        <translation>测试数字</translation>
    </message>
    <message>
        <source>affine test set</source>
        <translation>仿射变换测试集</translation>
    </message>
    <message>
        <source>scale s (factor 1 + s or 1 / (1 + s))</source>
        <translation>缩放 s（倍数 1 + s 或 1 / (1 + s)）</translation>
    </message>
    <message>
        <source>{kind} ({unit})</source>
        <translation>{kind}（{unit}）</translation>
    </message>
    <message>
        <source>{done} of {total} test sets measured on {n:,} digits</source>
        <translation>已测完 {done}/{total} 个测试集（各 {n:,} 个数字）</translation>
    </message>
    <message>
        <source>Train a CapsNet on {title} in the background with the paper&apos;s recipe (Adam, margin loss + 0.0005 × reconstruction loss, 3 routing iterations). Every view keeps working on the current input with the weights as they are being learned. &apos;network&apos; trains the baseline CNN shown beside the capsules instead, with the same data and schedule.</source>
        <translation>在后台按论文的配方在 {title} 上训练一个胶囊网络（Adam，间隔损失 + 0.0005 × 重构损失，3 次路由迭代）。训练时每个视图都继续用正在学习的权重处理当前输入。“网络”一项也可以改为训练胶囊旁边的对照 CNN，数据和学习率计划相同。</translation>
    </message>
    <message>
        <source>the capsule network of the paper</source>
        <translation>论文中的胶囊网络</translation>
    </message>
    <message>
        <source>CNN, CapsNet-sized</source>
        <translation>CNN，与胶囊网络同等规模</translation>
    </message>
    <message>
        <source>baseline CNN of 64, 64, 32 channels (8.4 M parameters), as shipped</source>
        <translation>通道数为 64、64、32 的对照 CNN（840 万个参数），即随附的那个</translation>
    </message>
    <message>
        <source>CNN, the paper&apos;s</source>
        <translation>CNN，论文中的</translation>
    </message>
    <message>
        <source>the paper&apos;s baseline CNN: 256, 256, 128 channels (35.4 M parameters)</source>
        <translation>论文中的对照 CNN：256、256、128 个通道（3540 万个参数）</translation>
    </message>
    <message>
        <source>Test accuracy after each epoch is measured on the first N of the 10,000 test images (0: all). {n:,} by default: training and the live views wait while the test images are classified, so a subset keeps that pause short. `capsviz train` evaluates all 10,000 unless given --test-subset.</source>
        <translation>每轮结束后在 10,000 张测试图像的前 N 张上测量测试准确率（0：全部）。默认 {n:,} 张：给测试图像分类时，训练和实时视图都要等待，只用一部分可以让停顿短一些。`capsviz train` 默认评估全部 10,000 张，除非给出 --test-subset。</translation>
    </message>
    <message>
        <source>Test accuracy after each epoch is measured on the first N of the 10,000 fixed test pairs (0: all). {n:,} by default: training and the live views wait while the fixed test pairs are classified, so a subset keeps that pause short. `capsviz train` evaluates all 10,000 unless given --test-subset.</source>
        <translation>每轮结束后在 10,000 个固定测试数字对的前 N 个上测量测试准确率（0：全部）。默认 {n:,} 个：给测试数字对分类时，训练和实时视图都要等待，只用一部分可以让停顿短一些。`capsviz train` 默认评估全部 10,000 个，除非给出 --test-subset。</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>all 60,000</source>
        <translation>全部 60,000</translation>
    </message>
    <message>
        <source> of 10,000</source>
        <translation> / 10,000</translation>
    </message>
    <message>
        <source>all 10,000</source>
        <translation>全部 10,000</translation>
    </message>
    <message>
        <source>start from fresh weights</source>
        <translation>从新的权重开始</translation>
    </message>
    <message>
        <source>Unchecked: fine-tune the model that is loaded now (or the CNN compared with it), starting at the learning rate its own training ended with</source>
        <translation>不勾选：微调当前载入的模型（或与之对照的 CNN），从它自己训练结束时的学习率开始</translation>
    </message>
    <message>
        <source>network</source>
        <translation>网络</translation>
    </message>
    <message>
        <source>what to train: the CapsNet, or the CNN compared with it</source>
        <translation>训练什么：胶囊网络，或与之对照的 CNN</translation>
    </message>
    <message>
        <source>epochs</source>
        <translation>轮数</translation>
    </message>
    <message>
        <source>passes over the training pairs</source>
        <translation>遍历训练数字对的次数</translation>
    </message>
    <message>
        <source>passes over the training images</source>
        <translation>遍历训练图像的次数</translation>
    </message>
    <message>
        <source>batch size</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>pairs per optimizer step (paper: 128)</source>
        <translation>每个优化步的数字对数（论文：128）</translation>
    </message>
    <message>
        <source>images per optimizer step (paper: 128)</source>
        <translation>每个优化步的图像数（论文：128）</translation>
    </message>
    <message>
        <source>learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>Adam learning rate at step 0 (paper: 0.001)</source>
        <translation>第 0 步时 Adam 的学习率（论文：0.001）</translation>
    </message>
    <message>
        <source>lr decay</source>
        <translation>学习率衰减</translation>
    </message>
    <message>
        <source>learning rate factor per &apos;decay steps&apos; steps (official code: 0.96)</source>
        <translation>每经过“衰减步数”步，学习率乘以的系数（官方代码：0.96）</translation>
    </message>
    <message>
        <source>decay steps</source>
        <translation>衰减步数</translation>
    </message>
    <message>
        <source>steps per decay factor (official code: 2000)</source>
        <translation>每次衰减之间的步数（官方代码：2000）</translation>
    </message>
    <message>
        <source>routing iterations</source>
        <translation>路由迭代次数</translation>
    </message>
    <message>
        <source>routing iterations during training (paper: 3)</source>
        <translation>训练时的路由迭代次数（论文：3）</translation>
    </message>
    <message>
        <source>recon. weight</source>
        <translation>重构权重</translation>
    </message>
    <message>
        <source>weight of the per-image squared error (paper: 0.0005)</source>
        <translation>每张图像平方误差的权重（论文：0.0005）</translation>
    </message>
    <message>
        <source>max shift</source>
        <translation>最大平移</translation>
    </message>
    <message>
        <source>MultiMNIST: not used (each digit of a pair is shifted by up to 4 px)</source>
        <translation>MultiMNIST：不使用（数字对中的每个数字最多平移 4 px）</translation>
    </message>
    <message>
        <source>random shifts of up to this many pixels, zero padded (paper: 2)</source>
        <translation>随机平移至多这么多像素，空出的部分补零（论文：2）</translation>
    </message>
    <message>
        <source>seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>seed of the weights, the batch order and the shifts</source>
        <translation>权重、批次顺序和平移所用的随机种子</translation>
    </message>
    <message>
        <source>device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>where training runs</source>
        <translation>训练在哪里运行</translation>
    </message>
    <message>
        <source>precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>auto: bfloat16 products where the CPU or GPU runs them fast, else float32; fp16 for GPUs without bfloat16</source>
        <translation>自动：CPU 或 GPU 能快速计算 bfloat16 乘积时用 bfloat16，否则用 float32；fp16 用于不支持 bfloat16 的 GPU</translation>
    </message>
    <message>
        <source>training digits</source>
        <translation>训练数字</translation>
    </message>
    <message>
        <source>training images</source>
        <translation>训练图像</translation>
    </message>
    <message>
        <source>use only the first N training images to draw the pairs from (0: all)</source>
        <translation>只从前 N 张训练图像中抽取数字对（0：全部）</translation>
    </message>
    <message>
        <source>use only the first N training images (0: all)</source>
        <translation>只用前 N 张训练图像（0：全部）</translation>
    </message>
    <message>
        <source>pairs per epoch</source>
        <translation>每轮数字对数</translation>
    </message>
    <message>
        <source>MultiMNIST pairs drawn afresh for each epoch</source>
        <translation>每轮重新抽取的 MultiMNIST 数字对</translation>
    </message>
    <message>
        <source>test pairs</source>
        <translation>测试数字对</translation>
    </message>
    <message>
        <source>test images</source>
        <translation>测试图像</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>开始</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Pause the run after this step; the views show its weights. Again: go on</source>
        <translation>在这一步之后暂停训练；各视图显示此时的权重。再按一次：继续</translation>
    </message>
    <message>
        <source>test examples</source>
        <translation>测试样本</translation>
    </message>
    <message>
        <source>test pairs: {right} of {k} right</source>
        <translation>测试数字对：{k} 对中答对 {right} 对</translation>
    </message>
    <message>
        <source>test digits: {right} of {k} right</source>
        <translation>测试数字：{k} 个中答对 {right} 个</translation>
    </message>
    <message>
        <source>A few test examples (top) and the model&apos;s reconstructions of them (bottom): a digit&apos;s from its longest capsule (Fig. 3 of the paper), a pair&apos;s from its two longest, in red and green (Fig. 5). An orange frame: the answer is wrong. They are made again whenever the model changes, so a training run shows them sharpen as it learns. Hover over a tile for its label and answer.</source>
        <translation>几个测试样本（上排）和模型对它们的重构（下排）：单个数字由最长的胶囊重构（论文图 3），数字对由最长的两个胶囊分别重构，以红色和绿色显示（图 5）。橙色边框表示回答错误。模型每次改变时都会重新生成，所以训练时可以看到它们随着学习逐渐变清晰。把鼠标停在某一格上可查看它的标签和回答。</translation>
    </message>
    <message>
        <source>test example: {label}; read as {answer}</source>
        <translation>测试样本：{label}；识别为 {answer}</translation>
    </message>
    <message>
        <source>test example: {label}; read as {answer}, wrong</source>
        <translation>测试样本：{label}；识别为 {answer}，错误</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>paused at step {k}; the views show these weights until you resume</source>
        <translation>已在第 {k} 步暂停；在继续之前，各视图显示的是这些权重</translation>
    </message>
    <message>
        <source>the run failed; see the message</source>
        <translation>训练失败；请看提示信息</translation>
    </message>
    <message>
        <source>epoch {epoch} trained; testing on the test set…</source>
        <translation>第 {epoch} 轮已训练完；正在用测试集测试…</translation>
    </message>
    <message>
        <source>total</source>
        <translation>总计</translation>
    </message>
    <message>
        <source>margin</source>
        <translation>间隔</translation>
    </message>
    <message>
        <source>0.0005 × recon</source>
        <translation>0.0005 × 重构</translation>
    </message>
    <message>
        <source>accuracy</source>
        <translation>准确率</translation>
    </message>
    <message>
        <source>train (batch)</source>
        <translation>训练（批）</translation>
    </message>
    <message>
        <source>test</source>
        <translation>测试</translation>
    </message>
    <message>
        <source>stopping…</source>
        <translation>正在停止…</translation>
    </message>
    <message>
        <source>pausing after this step…</source>
        <translation>这一步之后暂停…</translation>
    </message>
    <message>
        <source>going on…</source>
        <translation>继续进行…</translation>
    </message>
    <message>
        <source>loading MNIST…; the run will be saved to {path}</source>
        <translation>正在载入 MNIST…；训练结果将保存到 {path}</translation>
    </message>
    <message>
        <source>finished at step {k}; saved {path}</source>
        <translation>在第 {k} 步完成；已保存 {path}</translation>
    </message>
    <message>
        <source>stopped at step {k}; saved {path}</source>
        <translation>在第 {k} 步停止；已保存 {path}</translation>
    </message>
    <message>
        <source>epoch {epoch}, batch {batch}/{batches}, {rate:.0f} images/s, lr {lr:.2e}, {minutes:.1f} min to go</source>
        <translation>第 {epoch} 轮，第 {batch}/{batches} 批，每秒 {rate:.0f} 张图像，学习率 {lr:.2e}，还需 {minutes:.1f} 分钟</translation>
    </message>
    <message>
        <source>The votes of routing by agreement. Every primary capsule i predicts the pose of digit capsule j: u_hat_j|i = W_ij u_i, a 16-D vector. Each dot is one such vote, seen in the plane of the two directions in which this input&apos;s votes for j spread most (fixed for the input, so stepping the iteration moves the colours and the path, not the axes). Colour: the coupling c_ij at the iteration shown (one scale for all iterations, from the 1st to the 99th percentile of this input&apos;s couplings); size: the length of u_i. The path: v_j after each iteration, at the votes&apos; scale (s_j / Σ_i c_ij, the c-weighted mean vote, which points where v_j points).

What agreement looks like: where the parts agree on a pose, their votes crowd together; v_j moves towards the crowd, and the capsules in it (û·v large) gain coupling, so they turn bright. What it does not show: the other 14 dimensions, and the other nine digits, which compete for the same capsules (c_i sums to 1 over the ten). Drag the rectangle over some votes to see which parts of the input sent them.</source>
        <translation>按一致性路由中的投票。每个主胶囊 i 都预测数字胶囊 j 的姿态：û_j|i = W_ij u_i，一个 16 维向量。每个点是一张这样的投票，画在这个输入对 j 的投票散布最广的两个方向所张成的平面上（对同一输入固定不变，所以切换迭代时变的是颜色和轨迹，不是坐标轴）。颜色：所显示迭代的耦合系数 c_ij（所有迭代共用一个刻度，取这个输入耦合系数的第 1 到第 99 百分位）；大小：u_i 的长度。轨迹：每次迭代后的 v_j，按投票的尺度画出（s_j / Σ_i c_ij，即按 c 加权的平均投票，它与 v_j 同向）。

一致是什么样子：各部件对某个姿态意见一致时，它们的投票会挤在一起；v_j 向人群移动，人群中的胶囊（û·v 大）耦合系数增加，于是变亮。这里看不到的：另外 14 个维度，以及另外九个数字，它们在争夺同样的胶囊（c_i 在十个数字上求和为 1）。把矩形拖到一些投票上，就能看到它们来自输入的哪些部分。</translation>
    </message>
    <message>
        <source>The digit capsule j whose votes are shown</source>
        <translation>显示其投票的数字胶囊 j</translation>
    </message>
    <message>
        <source>first axis of the votes</source>
        <translation>投票的第一轴</translation>
    </message>
    <message>
        <source>second axis</source>
        <translation>第二轴</translation>
    </message>
    <message>
        <source>votes</source>
        <translation>投票</translation>
    </message>
    <message>
        <source>votes û_j|i</source>
        <translation>投票 û_j|i</translation>
    </message>
    <message>
        <source>v_j by iteration</source>
        <translation>v_j 的轨迹</translation>
    </message>
    <message>
        <source>v_j at r</source>
        <translation>第 r 次的 v_j</translation>
    </message>
    <message>
        <source>votes&lt;br&gt;in the rectangle</source>
        <translation>矩形内的&lt;br&gt;投票</translation>
    </message>
    <message>
        <source>The input pixels seen by the primary capsules whose votes lie inside the rectangle, each capsule weighted by ‖u_i‖</source>
        <translation>投票落在矩形内的那些主胶囊所看到的输入像素，每个胶囊按 ‖u_i‖ 加权</translation>
    </message>
    <message>
        <source>Routing iteration r whose couplings colour the votes</source>
        <translation>用其耦合系数给投票着色的路由迭代 r</translation>
    </message>
    <message>
        <source>hover over a vote to read it, click it to select its capsule</source>
        <translation>把鼠标停在投票上读出它，点击它即选中它的胶囊</translation>
    </message>
    <message>
        <source>longest</source>
        <translation>最长</translation>
    </message>
    <message>
        <source>second longest</source>
        <translation>第二长</translation>
    </message>
    <message>
        <source>votes for digit {j}, iteration {r}</source>
        <translation>数字 {j} 的投票，第 {r} 次迭代</translation>
    </message>
    <message>
        <source>capsule i={i} (type {t}, y={y}, x={x}), ‖u_i‖ = {u:.4f}; for digit {j} at iteration {r}: c_ij = {c:.4f}, b_ij = {b:.4f}, agreement û·v_j = {agreement:+.4f}</source>
        <translation>胶囊 i={i}（类型 {t}，y={y}，x={x}），‖u_i‖ = {u:.4f}；对数字 {j}，第 {r} 次迭代：c_ij = {c:.4f}，b_ij = {b:.4f}，一致度 û·v_j = {agreement:+.4f}</translation>
    </message>
    <message>
        <source>{k} votes&lt;br&gt;in the rectangle</source>
        <translation>矩形内&lt;br&gt;{k} 张投票</translation>
    </message>
    <message>
        <source>{accuracy:.2f} %</source>
        <translation>{accuracy:.2f} %</translation>
    </message>
    <message>
        <source>{accuracy:.2f} % on {n:,} test pairs</source>
        <translation>在 {n:,} 个测试数字对上 {accuracy:.2f} %</translation>
    </message>
    <message>
        <source>{accuracy:.2f} % on {n:,} test images</source>
        <translation>在 {n:,} 张测试图像上 {accuracy:.2f} %</translation>
    </message>
    <message>
        <source>1 epoch</source>
        <translation>1 轮</translation>
    </message>
    <message>
        <source>{n:g} epochs</source>
        <translation>{n:g} 轮</translation>
    </message>
    <message>
        <source>, </source>
        <translation>，</translation>
    </message>
    <message>
        <source>the model is training: its mistakes are listed when training stops</source>
        <translation>模型正在训练：训练停止后再列出它的错误</translation>
    </message>
    <message>
        <source>classifying the test digits: {done:,} / {total:,}</source>
        <translation>正在对测试数字分类：{done:,} / {total:,}</translation>
    </message>
    <message>
        <source>{errors:,} mistakes ({correct:.2f} % correct)</source>
        <translation>{errors:,} 个错误（正确率 {correct:.2f} %）</translation>
    </message>
    <message>
        <source>{errors:,} mistakes ({correct:.2f} % correct); the CNN {cnn_errors:,} mistakes ({cnn_correct:.2f} % correct); they disagree on {disagree:,}</source>
        <translation>{errors:,} 个错误（正确率 {correct:.2f} %）；CNN {cnn_errors:,} 个错误（正确率 {cnn_correct:.2f} %）；两者在 {disagree:,} 个数字上不一致</translation>
    </message>
    <message>
        <source>Cannot browse MNIST</source>
        <translation>无法浏览 MNIST</translation>
    </message>
    <message>
        <source>measuring on {n:,} digits…</source>
        <translation>正在 {n:,} 个数字上测量…</translation>
    </message>
    <message>
        <source>Cannot measure robustness</source>
        <translation>无法测量鲁棒性</translation>
    </message>
    <message>
        <source>{status} (stopped)</source>
        <translation>{status}（已停止）</translation>
    </message>
    <message>
        <source>Copy details</source>
        <translation>复制详细信息</translation>
    </message>
    <message>
        <source>About capsviz</source>
        <translation>关于 capsviz</translation>
    </message>
    <message>
        <source>Open checkpoint</source>
        <translation>打开检查点</translation>
    </message>
    <message>
        <source>safetensors (*.safetensors);;All files (*)</source>
        <translation>safetensors (*.safetensors);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Could not write {path}: {error}</source>
        <translation>无法写入 {path}：{error}</translation>
    </message>
    <message>
        <source>Save checkpoint</source>
        <translation>保存检查点</translation>
    </message>
    <message>
        <source>Training is paused</source>
        <translation>训练已暂停</translation>
    </message>
    <message>
        <source>Stop training, save it to {path} and quit?</source>
        <translation>停止训练、保存到 {path} 并退出吗？</translation>
    </message>
    <message>
        <source>MNIST is missing</source>
        <translation>缺少 MNIST</translation>
    </message>
    <message>
        <source>Downloading MNIST from torchvision&apos;s mirrors…</source>
        <translation>正在从 torchvision 的镜像下载 MNIST…</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Downloading MNIST</source>
        <translation>正在下载 MNIST</translation>
    </message>
    <message>
        <source>{name} has {size:,} of its {full:,} bytes</source>
        <translation>{name} 只有 {size:,} 字节，应为 {full:,} 字节</translation>
    </message>
    <message>
        <source>MNIST is damaged</source>
        <translation>MNIST 已损坏</translation>
    </message>
    <message>
        <source>{why} MNIST in {folder} is incomplete: {cut}.</source>
        <translation>{why}{folder} 中的 MNIST 不完整：{cut}。</translation>
    </message>
    <message>
        <source>Missing: {missing}.</source>
        <translation>缺少：{missing}。</translation>
    </message>
    <message>
        <source>{why} MNIST is not in {folder} (missing {missing}).</source>
        <translation>{why}MNIST 不在 {folder} 中（缺少 {missing}）。</translation>
    </message>
    <message>
        <source>Download it from torchvision&apos;s mirrors (up to 11 MB)?</source>
        <translation>要从 torchvision 的镜像下载吗（最多 11 MB）？</translation>
    </message>
    <message>
        <source>Downloading {name}: {done:.2f} of {total:.2f} MB</source>
        <translation>正在下载 {name}：{done:.2f} / {total:.2f} MB</translation>
    </message>
    <message>
        <source>Cannot download MNIST</source>
        <translation>无法下载 MNIST</translation>
    </message>
    <message>
        <source>MNIST test image {index} (label {label})</source>
        <translation>MNIST 测试图像 {index}（标签 {label}）</translation>
    </message>
    <message>
        <source>Cannot open image</source>
        <translation>无法打开图像</translation>
    </message>
    <message>
        <source>pasted image</source>
        <translation>粘贴的图像</translation>
    </message>
    <message>
        <source>image: {name}</source>
        <translation>图像：{name}</translation>
    </message>
    <message>
        <source>Open image</source>
        <translation>打开图像</translation>
    </message>
    <message>
        <source>Images (*.png *.jpg *.jpeg *.bmp *.gif *.tif *.tiff *.webp);;All files (*)</source>
        <translation>图像 (*.png *.jpg *.jpeg *.bmp *.gif *.tif *.tiff *.webp);;所有文件 (*)</translation>
    </message>
    <message>
        <source>the pasted or dropped image data cannot be read</source>
        <translation>无法读取粘贴或拖放的图像数据</translation>
    </message>
    <message>
        <source>Nothing to open</source>
        <translation>没有可打开的内容</translation>
    </message>
    <message>
        <source>the clipboard or the drop holds no image and no image file</source>
        <translation>剪贴板或拖放的内容里既没有图像，也没有图像文件</translation>
    </message>
    <message>
        <source>device: {device}</source>
        <translation>设备：{device}</translation>
    </message>
    <message>
        <source>

model: {model}
log file: {log}

Sabour, Frosst &amp; Hinton (2017), Dynamic Routing Between Capsules, arXiv:1710.09829.</source>
        <translation>

模型：{model}
日志文件：{log}

Sabour、Frosst 与 Hinton（2017），Dynamic Routing Between Capsules，arXiv:1710.09829。</translation>
    </message>
</context>
<context>
    <name>GraphicsScene</name>
    <message>
        <source>Export...</source>
        <translation>导出…</translation>
    </message>
</context>
<context>
    <name>QFileDialog</name>
    <message>
        <source>&amp;Look in:</source>
        <translation>查找范围(&amp;L)：</translation>
    </message>
    <message>
        <source>Files of &amp;type:</source>
        <translation>文件类型(&amp;T)：</translation>
    </message>
</context>
</TS>
