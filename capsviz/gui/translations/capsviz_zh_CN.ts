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
        <source>&lt;a href=&quot;tour&quot;&gt;New to capsule networks? Take the tour&lt;/a&gt;</source>
        <translation>&lt;a href=&quot;tour&quot;&gt;初次接触胶囊网络？跟着导览走一遍&lt;/a&gt;</translation>
    </message>
    <message>
        <source>A dozen steps on the live views (Help → Tour, any time; Esc leaves it)</source>
        <translation>在实时视图上走十几步（随时可从 帮助 → 导览 打开；按 Esc 退出）</translation>
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
        <source>, training into {name}</source>
        <translation>，正在训练并保存到 {name}</translation>
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
        <source>The input is turned step by step and every angle is classified. The length of the answer capsule hardly changes (invariance: the digit is still there) while its direction does (equivariance: the pose follows the rotation). The CNN&apos;s probability beside it can only say yes or no.</source>
        <translation>输入被一步步旋转，每个角度都分类一次。回答胶囊的长度几乎不变（不变性：数字仍然在），方向却在变（等变性：姿态跟着旋转）。旁边 CNN 的概率只能说“是”或“不是”。</translation>
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
        <source>mark decisive</source>
        <translation>标出明确路由的胶囊</translation>
    </message>
    <message>
        <source>count on the test set</source>
        <translation>在测试集上统计</translation>
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
</context>
</TS>
